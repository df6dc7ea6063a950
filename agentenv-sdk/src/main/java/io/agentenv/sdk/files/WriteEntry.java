package io.agentenv.sdk.files;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One file of a multi-file {@link Files#write(java.util.List)}.
 *
 * @param path where to write it (relative paths resolve in the user's home)
 * @param data its contents
 */
public record WriteEntry(String path, byte[] data) {
    /** Checks the fields and copies the data. */
    public WriteEntry {
        Objects.requireNonNull(path, "path");
        data = data.clone();
    }

    /** A file holding {@code text} (UTF-8). */
    public static WriteEntry of(String path, String text) {
        return new WriteEntry(path, text.getBytes(StandardCharsets.UTF_8));
    }

    /** A copy of the contents. */
    @Override
    public byte[] data() {
        return data.clone();
    }
}
