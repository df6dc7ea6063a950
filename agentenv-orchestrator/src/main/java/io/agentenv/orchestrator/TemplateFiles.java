package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.TemplateId;
import java.io.InputStream;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The files uploaded for template builds' COPY steps, by template and the SDK's files hash (E2B's {@code GET
 * /templates/{templateID}/files/{hash}} and the upload it leads to): a port, which the server implements over its data
 * directory.
 */
public interface TemplateFiles {
    /** The form of a files hash: what the SDK sends, SHA-256 in lowercase hex. */
    Pattern HASH = Pattern.compile("[0-9a-f]{64}");

    /**
     * The tar archive uploaded for {@code hash} of {@code template}, checked so that extracting it writes nothing outside
     * the directory it is extracted in: every member a relative path without {@code ..}, none below a symbolic link of
     * the archive, and only files, directories, symbolic links and hard links to its own files. Empty when none was
     * uploaded; INVALID_ARGUMENT when the archive fails the check.
     */
    Optional<Archive> archive(TemplateId template, String hash);

    /** Removes every upload of {@code template} (it was deleted); nothing when it has none. */
    void deleteAll(TemplateId template);

    /** No files at all (a server that takes no uploads). */
    static TemplateFiles none() {
        return new TemplateFiles() {
            @Override
            public Optional<Archive> archive(TemplateId template, String hash) {
                return Optional.empty();
            }

            @Override
            public void deleteAll(TemplateId template) {}
        };
    }

    static boolean isHash(String text) {
        return text != null && HASH.matcher(text).matches();
    }

    /**
     * A checked archive.
     *
     * @param size    its size in bytes
     * @param gzip    whether it is gzip-compressed (the SDK compresses unless told not to)
     * @param content opens it for reading, anew each call
     */
    record Archive(long size, boolean gzip, Supplier<InputStream> content) {
        public Archive {
            if (size < 0) {
                throw new IllegalArgumentException("size must be >= 0");
            }
            requireNonNull(content, "content is null");
        }
    }
}
