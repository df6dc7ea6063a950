package io.agentenv.sdk.files;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A file, directory or link in the sandbox.
 *
 * @param name          its base name
 * @param type          what it is
 * @param path          its absolute path
 * @param size          its size in bytes
 * @param mode          its permission bits (e.g. {@code 0644})
 * @param permissions   {@code ls}-style permissions, e.g. {@code -rw-r--r--}
 * @param owner         the owner's name
 * @param group         the group's name
 * @param modifiedTime  when it was last modified
 * @param symlinkTarget where a link points, for links
 * @param metadata      its user metadata (extended attributes), possibly empty
 */
public record EntryInfo(
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
    /** Checks the fields. */
    public EntryInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(symlinkTarget, "symlinkTarget");
        metadata = Map.copyOf(metadata);
    }
}
