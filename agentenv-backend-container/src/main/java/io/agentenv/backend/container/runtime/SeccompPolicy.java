package io.agentenv.backend.container.runtime;

import java.util.List;

/**
 * The sandbox seccomp filter: allow by default, refuse what lets a process reach past its container into the shared
 * kernel. Names libseccomp does not know are skipped by runc, so the list may name newer syscalls.
 */
public final class SeccompPolicy {

    private static final int EPERM = 1;
    private static final int ENOSYS = 38;
    private static final long CLONE_NEWUSER = 0x10000000L;

    /** Refused with EPERM whatever their arguments. */
    static final List<String> DENIED = List.of(
            // kernel keyrings, eBPF, perf and userfaultfd: large attack surface, shared kernel state
            "keyctl",
            "add_key",
            "request_key",
            "bpf",
            "perf_event_open",
            "userfaultfd",
            // io_uring bypasses seccomp for the operations it performs
            "io_uring_setup",
            "io_uring_enter",
            "io_uring_register",
            // the mount family (also refused by the missing CAP_SYS_ADMIN; belt and braces)
            "mount",
            "umount",
            "umount2",
            "move_mount",
            "open_tree",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
            "mount_setattr",
            "pivot_root",
            // kernel code and machine state
            "kexec_load",
            "kexec_file_load",
            "init_module",
            "finit_module",
            "delete_module",
            "create_module",
            "reboot",
            "swapon",
            "swapoff",
            "acct",
            "quotactl",
            "quotactl_fd",
            "syslog",
            "vhangup",
            "nfsservctl",
            "uselib",
            "lookup_dcookie",
            "iopl",
            "ioperm",
            // clocks are host-wide
            "settimeofday",
            "clock_settime",
            "clock_adjtime",
            "adjtimex",
            // reading or writing other processes' memory without stopping them, comparing their kernel objects, joining
            // their namespaces; ptrace itself stays (see profile())
            "process_vm_readv",
            "process_vm_writev",
            "kcmp",
            "setns",
            // file handles bypass path checks (the "shocker" escape)
            "open_by_handle_at",
            "name_to_handle_at");

    private SeccompPolicy() {}

    static OciSpec.Seccomp profile() {
        List<OciSpec.SyscallRule> rules = List.of(
                new OciSpec.SyscallRule(DENIED, "SCMP_ACT_ERRNO", EPERM, List.of()),
                // ptrace is allowed, attach and seize included: debuggers and tracers (gdb -p, strace -p) of the
                // sandbox's own processes are part of what agents do. The pid namespace shows no process of the host
                // or of another sandbox to attach to, and the kernel's own check (same uid; CAP_SYS_PTRACE, which
                // sandboxes lack, otherwise) keeps `user` away from root's processes.
                // no new user namespaces (the usual first step of a kernel exploit)
                new OciSpec.SyscallRule(
                        List.of("unshare"),
                        "SCMP_ACT_ERRNO",
                        EPERM,
                        List.of(new OciSpec.SyscallArg(0, CLONE_NEWUSER, CLONE_NEWUSER, "SCMP_CMP_MASKED_EQ"))),
                new OciSpec.SyscallRule(
                        List.of("clone"),
                        "SCMP_ACT_ERRNO",
                        EPERM,
                        List.of(new OciSpec.SyscallArg(0, CLONE_NEWUSER, CLONE_NEWUSER, "SCMP_CMP_MASKED_EQ"))),
                // clone3 passes its flags in memory seccomp cannot read: ENOSYS makes libc fall back to clone
                new OciSpec.SyscallRule(List.of("clone3"), "SCMP_ACT_ERRNO", ENOSYS, List.of()));
        return new OciSpec.Seccomp(
                "SCMP_ACT_ALLOW", List.of("SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"), rules);
    }
}
