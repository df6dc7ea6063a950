package io.agentenv.libc;

import java.io.IOException;
import java.util.Map;

/** A system call failed with {@code errno}; the message names the call, the entry and the error. */
public final class ErrnoException extends IOException {
    private static final long serialVersionUID = 1L;

    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EAGAIN = 11;
    public static final int EACCES = 13;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int EXDEV = 18;
    public static final int ENOTDIR = 20;
    public static final int EISDIR = 21;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int ENOSYS = 38;
    public static final int ENOTEMPTY = 39;
    public static final int ELOOP = 40;
    public static final int EOPNOTSUPP = 95;
    public static final int EDQUOT = 122;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1, "EPERM: operation not permitted"),
            Map.entry(ENOENT, "ENOENT: no such file or directory"),
            Map.entry(EAGAIN, "EAGAIN: try again"),
            Map.entry(EACCES, "EACCES: permission denied"),
            Map.entry(EBUSY, "EBUSY: busy"),
            Map.entry(EEXIST, "EEXIST: exists"),
            Map.entry(EXDEV, "EXDEV: crosses a mount"),
            Map.entry(ENOTDIR, "ENOTDIR: not a directory"),
            Map.entry(EISDIR, "EISDIR: is a directory"),
            Map.entry(EINVAL, "EINVAL: invalid argument"),
            Map.entry(ENOSPC, "ENOSPC: no space left on device"),
            Map.entry(ENOSYS, "ENOSYS: not implemented by this kernel"),
            Map.entry(ENOTEMPTY, "ENOTEMPTY: directory not empty"),
            Map.entry(ELOOP, "ELOOP: a symbolic link where none may be"),
            Map.entry(EOPNOTSUPP, "EOPNOTSUPP: not supported"),
            Map.entry(EDQUOT, "EDQUOT: disk quota exceeded"));

    private final int errno;

    public ErrnoException(String call, String entry, int errno) {
        super(call + "(" + entry + ") failed: " + NAMES.getOrDefault(errno, "errno " + errno));
        this.errno = errno;
    }

    public int errno() {
        return errno;
    }
}
