// The 32-bit system call ABI (int $0x80) from a 64-bit process, for e2e/tests/security-escapes.test.mjs: the kernel
// runs its i386 table there (IA32 emulation), with other numbers than x86-64's, so a seccomp filter written for
// x86-64 alone would let these through. Built in the sandbox (gcc) and run by escape-attacks.py, which adds its
// lines to its own results.
//
//   escape-int80  ->  one JSON object per line: {"name": "int80 <call>", "outcome": "ok" | "<errno name>"}
//
// "int80 getpid" is the control: "ok" when it returns this process's pid (the ABI works here), "unavailable" when the
// kernel has no IA32 emulation (then nothing else runs).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

// i386 system call numbers (arch/x86/entry/syscalls/syscall_32.tbl)
enum { GETPID = 20, MOUNT = 21, REBOOT = 88, SYSLOG = 103, INIT_MODULE = 128, KEXEC_LOAD = 283,
       KEYCTL = 288, UNSHARE = 310, PERF_EVENT_OPEN = 336, OPEN_BY_HANDLE_AT = 342, SETNS = 346, BPF = 357,
       SOCKET = 359, USERFAULTFD = 374, IO_URING_SETUP = 425 };

static long int80(long nr, long a, long b, long c, long d, long e) {
    int ret; // the 32-bit ABI returns in eax
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e) : "memory");
    return ret;
}

static void report(const char *name, long ret) {
    const char *errname = ret < 0 && ret > -4096 ? strerrorname_np((int)-ret) : NULL;
    printf("{\"name\": \"int80 %s\", \"outcome\": \"%s\"}\n", name, ret >= 0 ? "ok" : errname ? errname : "error");
    fflush(stdout);
}

int main(void) {
    pid_t probe = fork();
    if (probe == 0) {
        _exit(int80(GETPID, 0, 0, 0, 0, 0) == getpid() ? 0 : 1);
    }
    int status;
    waitpid(probe, &status, 0);
    if (!WIFEXITED(status)) { // killed by the int $0x80 itself: no IA32 emulation in this kernel
        printf("{\"name\": \"int80 getpid\", \"outcome\": \"unavailable\"}\n");
        return 0;
    }
    report("getpid", WEXITSTATUS(status) == 0 ? 0 : -EINVAL);

    // arguments the 32-bit ABI passes as pointers must lie below 4 GiB
    char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    char *target = low, *fstype = low + 64, *none = low + 128, *image = low + 192, *attr = low + 512;
    char *handle = low + 1024, *params = low + 2048, *log = low + 3072;
    strcpy(target, "/tmp/escape-mnt");
    strcpy(fstype, "tmpfs");
    strcpy(none, "none");
    memcpy(image, "\x7f" "ELF", 4);
    ((unsigned *)attr)[0] = 1;   // PERF_TYPE_SOFTWARE
    ((unsigned *)attr)[1] = 128; // size
    ((unsigned *)handle)[0] = 8; // handle_bytes; type FILEID_INO32_GEN, inode 2 (a root directory), generation 0
    ((unsigned *)handle)[1] = 1;
    ((unsigned *)handle)[2] = 2;

    report("mount tmpfs", int80(MOUNT, (long)none, (long)target, (long)fstype, 0, 0));
    report("syslog read all", int80(SYSLOG, 3, (long)log, 1024, 0, 0));
    report("init_module", int80(INIT_MODULE, (long)image, 64, (long)none, 0, 0));
    report("kexec_load", int80(KEXEC_LOAD, 0, 0, 0, 0, 0));
    report("keyctl", int80(KEYCTL, 0, -3, 0, 0, 0));
    report("perf_event_open", int80(PERF_EVENT_OPEN, (long)attr, 0, -1, -1, 0));
    int host_fs = open("/etc/resolv.conf", O_RDONLY);
    report("open_by_handle_at", int80(OPEN_BY_HANDLE_AT, host_fs, (long)handle, O_RDONLY | O_DIRECTORY, 0, 0));
    int ns = open("/proc/1/ns/mnt", O_RDONLY);
    report("setns", ns < 0 ? -errno : int80(SETNS, ns, 0, 0, 0, 0));
    report("bpf map create", int80(BPF, 0, (long)attr, 128, 0, 0));
    report("AF_PACKET socket", int80(SOCKET, 17, 3, 0x0300, 0, 0));
    report("userfaultfd", int80(USERFAULTFD, 0, 0, 0, 0, 0));
    report("io_uring_setup", int80(IO_URING_SETUP, 1, (long)params, 0, 0, 0));
    report("reboot (CAD off)", int80(REBOOT, 0xfee1dead, 672274793, 0, 0, 0));
    report("unshare user namespace", int80(UNSHARE, 0x10000000, 0, 0, 0, 0)); // last: it would change this process
    return 0;
}
