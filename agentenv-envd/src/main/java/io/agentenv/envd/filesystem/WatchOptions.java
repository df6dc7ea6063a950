package io.agentenv.envd.filesystem;

import static java.util.Objects.requireNonNull;

/** How a {@link DirectoryWatch} watches: which entries, what it reports, and where it may watch. */
public record WatchOptions(Scope scope, Detail detail, Mounts mounts) {
    public WatchOptions {
        requireNonNull(scope, "scope is null");
        requireNonNull(detail, "detail is null");
        requireNonNull(mounts, "mounts is null");
    }

    /** Whether events below the direct children are reported. */
    public enum Scope {
        CHILDREN,
        RECURSIVE
    }

    /** Whether CREATE, WRITE and CHMOD events carry the entry. */
    public enum Detail {
        NAME_ONLY,
        WITH_ENTRY
    }

    /** Whether a directory on a network filesystem (NFS, SMB, FUSE), where inotify sees only local changes, may be watched. */
    public enum Mounts {
        LOCAL_ONLY,
        ALLOW_NETWORK
    }
}
