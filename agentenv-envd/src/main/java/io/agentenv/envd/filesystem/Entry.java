package io.agentenv.envd.filesystem;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * What envd reports about one filesystem entry (E2B's {@code EntryInfo}).
 *
 * @param path absolute path, as requested (symlinks in it are not resolved)
 * @param mode permission bits only (0644, 0755), of the symlink target for symlinks
 * @param permissions Go-style mode string, e.g. {@code -rw-r--r--}, {@code drwxr-xr-x}, {@code Lrwxrwxrwx}
 * @param symlinkTarget the fully resolved target, only for symlinks
 * @param metadata user metadata stored in extended attributes
 */
public record Entry(
        String name,
        FileType type,
        String path,
        long size,
        int mode,
        String permissions,
        String owner,
        String group,
        Instant modifiedTime,
        Optional<String> symlinkTarget,
        Map<String, String> metadata) {
    public Entry {
        requireNonNull(name, "name is null");
        requireNonNull(type, "type is null");
        requireNonNull(path, "path is null");
        requireNonNull(permissions, "permissions is null");
        requireNonNull(owner, "owner is null");
        requireNonNull(group, "group is null");
        requireNonNull(modifiedTime, "modifiedTime is null");
        requireNonNull(symlinkTarget, "symlinkTarget is null");
        metadata = Map.copyOf(metadata);
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        if ((mode & ~07777) != 0) {
            throw new IllegalArgumentException(
                    "mode must hold permission bits only, got " + Integer.toOctalString(mode));
        }
    }
}
