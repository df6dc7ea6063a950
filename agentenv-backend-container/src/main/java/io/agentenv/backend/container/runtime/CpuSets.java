package io.agentenv.backend.container.runtime;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Which host CPUs each sandbox's cpuset holds. A sandbox of {@code cpu_count} CPUs gets that many of the host's, so
 * that the kernel's affinity mask, which {@code nproc}, {@code os.sched_getaffinity} and the JVM count, names as many
 * CPUs as its CFS quota allows it to use (a Firecracker guest has as many vCPUs). The quota still bounds the time;
 * the cpuset only bounds where. Sandboxes take the host's CPUs in turn (round robin over creates and restores), so
 * that sandboxes of one CPU spread over the host instead of all sharing its first; a sandbox that asks for as many
 * CPUs as the host has, or more, gets no cpuset of its own (every CPU, as before).
 *
 * <p>A restore is placed afresh: runc moves CRIU into the new cgroup before CRIU forks the restored tasks, and CRIU
 * restores no affinity unless asked to ({@code --with-cpu-affinity}), so a restored sandbox runs on the cpuset of its
 * new config, whatever its checkpoint's was.
 */
public final class CpuSets {

    private final List<Integer> hostCpus;
    private final AtomicInteger next = new AtomicInteger();

    /** @param hostCpus the CPUs sandboxes may run on (their cgroup parent's cpuset), at least one */
    CpuSets(List<Integer> hostCpus) {
        this.hostCpus = List.copyOf(new TreeSet<>(requireNonNull(hostCpus, "hostCpus is null")));
        if (this.hostCpus.isEmpty()) {
            throw new IllegalArgumentException("no host CPU to place sandboxes on");
        }
    }

    /**
     * The CPUs of the cpuset cgroup {@code parent} below the cpuset hierarchy at {@code cpusetRoot} (the host's, when
     * the parent does not exist yet: runc then makes it with the host's CPUs).
     */
    public static CpuSets of(Path cpusetRoot, String parent) throws IOException {
        Path own = cpusetRoot.resolve(parent).resolve("cpuset.cpus");
        Path list = Files.exists(own) ? own : cpusetRoot.resolve("cpuset.cpus");
        return new CpuSets(parse(Files.readString(list)));
    }

    /** Every CPU sandboxes may run on. */
    public List<Integer> hostCpus() {
        return hostCpus;
    }

    /**
     * The cpuset CPU list (runc's {@code linux.resources.cpu.cpus}, e.g. {@code "1"} or {@code "0,1"}) of the next
     * sandbox of {@code cpuCount} CPUs, or empty when it gets all of the host's.
     */
    public Optional<String> next(int cpuCount) {
        if (cpuCount < 1) {
            throw new IllegalArgumentException("cpuCount must be >= 1: " + cpuCount);
        }
        int n = hostCpus.size();
        if (cpuCount >= n) {
            return Optional.empty();
        }
        int first = Math.floorMod(next.getAndAdd(cpuCount), n);
        TreeSet<Integer> picked = new TreeSet<>();
        for (int i = 0; i < cpuCount; i++) {
            picked.add(hostCpus.get((first + i) % n));
        }
        return Optional.of(picked.stream().map(String::valueOf).collect(Collectors.joining(",")));
    }

    /** A kernel CPU list ({@code 0-3,8,10-11}) as CPU numbers. */
    static List<Integer> parse(String list) {
        List<Integer> cpus = new ArrayList<>();
        String trimmed = list.strip();
        if (trimmed.isEmpty()) {
            return cpus;
        }
        for (String part : trimmed.split(",")) {
            int dash = part.indexOf('-');
            try {
                if (dash < 0) {
                    cpus.add(Integer.parseInt(part));
                } else {
                    int from = Integer.parseInt(part.substring(0, dash));
                    int to = Integer.parseInt(part.substring(dash + 1));
                    for (int cpu = from; cpu <= to; cpu++) {
                        cpus.add(cpu);
                    }
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a CPU list: " + list, e);
            }
        }
        return cpus;
    }
}
