package io.agentenv.volumes.content;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Optional;

/**
 * One file system entry of a volume as the content API shows it: its path from the volume's root, its type, size,
 * permission bits, owner as the sandbox sees it (guest ids) and times; a symlink's target as stored.
 */
public record EntryStat(
        String name,
        String path,
        Type type,
        long size,
        int mode,
        int uid,
        int gid,
        Instant atime,
        Instant mtime,
        Instant ctime,
        Optional<String> target) {
    /** The entry types of the E2B volume API. */
    public enum Type {
        FILE("file"),
        DIRECTORY("directory"),
        SYMLINK("symlink"),
        UNKNOWN("unknown");

        private final String wire;

        Type(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }
    }

    public EntryStat {
        requireNonNull(name, "name is null");
        requireNonNull(path, "path is null");
        requireNonNull(type, "type is null");
        requireNonNull(atime, "atime is null");
        requireNonNull(mtime, "mtime is null");
        requireNonNull(ctime, "ctime is null");
        requireNonNull(target, "target is null");
    }
}
