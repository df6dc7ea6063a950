package io.agentenv.envd.filesystem;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.HashMap;
import java.util.Map;

/**
 * User metadata of a file, kept in extended attributes under {@code user.e2b.<key>} exactly like E2B's envd (the
 * {@code e2b.} namespace keeps other tools' {@code user.*} attributes out). Keys and values are printable ASCII.
 */
public final class Metadata {
    /** The attribute name prefix inside the {@code user.} namespace (the JDK view adds and strips {@code user.}). */
    static final String PREFIX = "e2b.";

    private static final int MAX_KEY_LENGTH = 255 - "user.".length() - PREFIX.length();
    private static final int MAX_TOTAL_LENGTH = 4096;

    private Metadata() {}

    /** Rejects a metadata set that cannot be stored, with a message fit for the client. */
    public static void validate(Map<String, String> metadata) {
        int total = 0;
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            String key = e.getKey();
            if (key.isEmpty()) {
                throw new FsException(FsError.INVALID_ARGUMENT, "metadata key must not be empty");
            }
            if (key.length() > MAX_KEY_LENGTH) {
                throw new FsException(
                        FsError.INVALID_ARGUMENT, "metadata key '" + key + "' exceeds " + MAX_KEY_LENGTH + " bytes");
            }
            requirePrintableAscii("key", key);
            requirePrintableAscii("value for key '" + key + "'", e.getValue());
            total += "user.".length()
                    + PREFIX.length()
                    + key.length()
                    + e.getValue().length();
        }
        if (total > MAX_TOTAL_LENGTH) {
            throw new FsException(
                    FsError.INVALID_ARGUMENT,
                    "total metadata size " + total + " exceeds " + MAX_TOTAL_LENGTH + " bytes");
        }
    }

    private static void requirePrintableAscii(String label, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                throw new FsException(
                        FsError.INVALID_ARGUMENT,
                        "metadata " + label + " contains a non-printable-ASCII character at offset " + i);
            }
        }
    }

    /** The file's metadata; empty when it has none, or its filesystem has no extended attributes. Follows symlinks. */
    static Map<String, String> read(Path path) {
        UserDefinedFileAttributeView view = Files.getFileAttributeView(path, UserDefinedFileAttributeView.class);
        if (view == null) {
            return Map.of();
        }
        try {
            Map<String, String> out = null;
            for (String name : view.list()) {
                if (!name.startsWith(PREFIX) || name.length() == PREFIX.length()) {
                    continue;
                }
                ByteBuffer value = ByteBuffer.allocate(view.size(name));
                view.read(name, value);
                value.flip();
                try {
                    String text = StandardCharsets.UTF_8
                            .newDecoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(value)
                            .toString();
                    if (out == null) {
                        out = new HashMap<>();
                    }
                    out.put(name.substring(PREFIX.length()), text);
                } catch (CharacterCodingException e) {
                    // set inside the sandbox with arbitrary bytes: not representable in a proto string map, skip it
                }
            }
            return out == null ? Map.of() : out;
        } catch (IOException e) {
            // unsupported (procfs, some overlays), dangling symlink, or removed meanwhile: no metadata
            return Map.of();
        }
    }

    /**
     * Replaces the file's metadata with {@code metadata} (an empty map clears it), so that overwriting a file does not
     * keep a previous upload's metadata. A filesystem without extended attributes accepts only an empty set.
     */
    public static void replace(Path path, Map<String, String> metadata) {
        validate(metadata);
        UserDefinedFileAttributeView view = Files.getFileAttributeView(path, UserDefinedFileAttributeView.class);
        try {
            if (view == null) {
                throw new FileSystemException(path.toString(), null, "Operation not supported");
            }
            for (String name : view.list()) {
                if (name.startsWith(PREFIX) && !metadata.containsKey(name.substring(PREFIX.length()))) {
                    view.delete(name);
                }
            }
            for (Map.Entry<String, String> e : metadata.entrySet()) {
                view.write(PREFIX + e.getKey(), StandardCharsets.US_ASCII.encode(e.getValue()));
            }
        } catch (IOException e) {
            if (metadata.isEmpty() && isUnsupported(e)) {
                return;
            }
            if (isUnsupported(e)) {
                throw new FsException(
                        FsError.INVALID_ARGUMENT, "the filesystem of '" + path + "' does not support metadata", e);
            }
            throw FsException.of(e, "error writing metadata of", path);
        }
    }

    private static boolean isUnsupported(IOException e) {
        String reason = e instanceof FileSystemException fse ? fse.getReason() : e.getMessage();
        return reason != null && (reason.contains("not supported") || reason.contains("Operation not supported"));
    }
}
