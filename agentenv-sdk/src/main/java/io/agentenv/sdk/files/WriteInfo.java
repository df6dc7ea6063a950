package io.agentenv.sdk.files;

import java.util.Objects;

/**
 * A file written by {@link Files#write}.
 *
 * @param name its base name
 * @param type what it is (a file)
 * @param path its absolute path
 */
public record WriteInfo(String name, FileType type, String path) {
    /** Checks the fields. */
    public WriteInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(path, "path");
    }
}
