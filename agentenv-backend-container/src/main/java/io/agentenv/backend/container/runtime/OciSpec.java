package io.agentenv.backend.container.runtime;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * The subset of the OCI runtime spec (1.0.2, what runc 1.1 reads) this backend writes as {@code config.json}.
 * Field names are the spec's; null fields are left out.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record OciSpec(
        String ociVersion,
        Process process,
        Root root,
        String hostname,
        List<Mount> mounts,
        Linux linux,
        Hooks hooks,
        Map<String, String> annotations) {

    @JsonInclude(JsonInclude.Include.NON_NULL)
    @SuppressWarnings("AvoidCommonTypeNames") // the OCI runtime spec's own name for this object
    record Process(
            boolean terminal,
            User user,
            List<String> args,
            List<String> env,
            String cwd,
            Capabilities capabilities,
            List<Rlimit> rlimits,
            boolean noNewPrivileges,
            Integer oomScoreAdj) {}

    record User(int uid, int gid) {}

    record Capabilities(
            List<String> bounding,
            List<String> effective,
            List<String> inheritable,
            List<String> permitted,
            List<String> ambient) {}

    record Rlimit(String type, long hard, long soft) {}

    record Root(String path, boolean readonly) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Mount(String destination, String type, String source, List<String> options) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Linux(
            List<Namespace> namespaces,
            Resources resources,
            String cgroupsPath,
            Seccomp seccomp,
            List<String> maskedPaths,
            List<String> readonlyPaths,
            List<IdMapping> uidMappings,
            List<IdMapping> gidMappings) {}

    record IdMapping(int containerID, int hostID, int size) {}

    /** The runtime's hooks; only createRuntime (run in the host's namespaces, on create and on restore). */
    record Hooks(List<Hook> createRuntime) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Hook(String path, List<String> args, List<String> env, Integer timeout) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Namespace(String type, String path) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Resources(List<DeviceRule> devices, Memory memory, Cpu cpu, Pids pids) {}

    record DeviceRule(boolean allow, String type, String access) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Memory(long limit, Long swap) {}

    /** CFS quota per period; {@code cpus}: the cpuset's CPU list, null for the parent's (every CPU). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Cpu(long quota, long period, String cpus) {}

    record Pids(long limit) {}

    record Seccomp(String defaultAction, List<String> architectures, List<SyscallRule> syscalls) {}

    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    record SyscallRule(List<String> names, String action, Integer errnoRet, List<SyscallArg> args) {}

    record SyscallArg(int index, long value, long valueTwo, String op) {}
}
