package io.agentenv.server.templates;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.ErrorKind;
import io.agentenv.orchestrator.TemplateFiles;
import io.agentenv.spi.TemplateId;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files uploaded for template builds' COPY steps, under the server's data directory: {@code <dir>/<template
 * id>/<files hash>}, one tar archive (gzip-compressed or not) per hash, as the SDK uploaded it. An upload is written to a
 * temporary file beside its place, checked ({@link TarCheck}) and then renamed into place, so a failed, oversized or
 * refused upload leaves nothing; an upload of a hash that is there replaces it (the SDK's {@code forceUpload}).
 * Temporary files an interrupted process left are removed when the store opens. Thread-safe.
 */
public final class TemplateFileStore implements TemplateFiles {
    private static final Logger log = LoggerFactory.getLogger(TemplateFileStore.class);
    private static final String TEMP_PREFIX = ".upload-";

    private final Path dir;

    /** An upload that is larger than allowed; nothing of it was kept. */
    public static final class TooLarge extends Exception {
        private static final long serialVersionUID = 1L;

        TooLarge(long limit) {
            super("the upload is larger than " + limit + " bytes", null, false, false);
        }
    }

    /** Opens (and creates) the store in {@code dir}, removing what interrupted uploads left there. */
    public TemplateFileStore(Path dir) throws IOException {
        this.dir = requireNonNull(dir, "dir is null");
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(
                    dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        removeLeftovers();
    }

    /** Whether an upload of {@code hash} for {@code template} is kept. */
    public boolean present(TemplateId template, String hash) {
        return TemplateFiles.isHash(hash) && Files.isRegularFile(path(template, hash), LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Keeps {@code content}, at most {@code maxBytes} long, as the upload of {@code hash} for {@code template}, replacing
     * one that is there. INVALID_ARGUMENT when the hash is malformed, the content is not a tar archive that {@link
     * TarCheck} accepts, or it broke off; INTERNAL when it cannot be written. Whatever fails, nothing of it is kept.
     */
    public void save(TemplateId template, String hash, InputStream content, long maxBytes) throws TooLarge {
        requireNonNull(template, "template is null");
        requireNonNull(content, "content is null");
        if (!TemplateFiles.isHash(hash)) {
            throw AgentEnvException.invalidArgument("files hash must be 64 lowercase hex digits");
        }
        Path temp;
        try {
            Path folder = Files.createDirectories(folder(template));
            temp = Files.createTempFile(folder, TEMP_PREFIX, "");
        } catch (IOException e) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "the upload could not be stored", e);
        }
        boolean kept = false;
        try {
            copy(content, temp, maxBytes);
            TarCheck.check(temp);
            Files.move(temp, path(template, hash), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            kept = true;
        } catch (IOException e) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "the upload could not be stored", e);
        } finally {
            if (!kept) {
                deleteQuietly(temp);
            }
        }
    }

    @Override
    public Optional<Archive> archive(TemplateId template, String hash) {
        requireNonNull(template, "template is null");
        if (!present(template, hash)) {
            return Optional.empty();
        }
        Path file = path(template, hash);
        try {
            boolean gzip = TarCheck.check(file);
            long size = Files.size(file);
            return Optional.of(new Archive(size, gzip, () -> {
                try {
                    return Files.newInputStream(file);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }));
        } catch (IOException e) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "the uploaded files could not be read", e);
        }
    }

    /** Removes the template's uploads. INTERNAL when they cannot all be removed. */
    @Override
    public void deleteAll(TemplateId template) {
        requireNonNull(template, "template is null");
        Path folder = folder(template);
        if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(folder)) {
            for (Path file : files) {
                Files.deleteIfExists(file);
            }
            Files.deleteIfExists(folder);
        } catch (IOException e) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "the uploads of " + template + " could not be removed", e);
        }
    }

    /** A template's folder (a template id is one path element: letters, digits, '_', '.', '-', not a dot first). */
    private Path folder(TemplateId template) {
        return dir.resolve(template.value());
    }

    private Path path(TemplateId template, String hash) {
        return folder(template).resolve(hash);
    }

    /** Copies at most {@code maxBytes}; a read that fails is the client's (the upload broke off). */
    private static void copy(InputStream content, Path target, long maxBytes) throws IOException, TooLarge {
        byte[] buffer = new byte[64 * 1024];
        long total = 0;
        try (OutputStream out = Files.newOutputStream(target)) {
            while (true) {
                int n;
                try {
                    n = content.read(buffer);
                } catch (IOException e) {
                    throw new AgentEnvException(ErrorKind.INVALID_ARGUMENT, "the upload broke off", e);
                }
                if (n < 0) {
                    return;
                }
                total += n;
                if (total > maxBytes) {
                    throw new TooLarge(maxBytes);
                }
                out.write(buffer, 0, n);
            }
        }
    }

    private void removeLeftovers() throws IOException {
        try (DirectoryStream<Path> templates = Files.newDirectoryStream(dir, Files::isDirectory)) {
            for (Path template : templates) {
                try (DirectoryStream<Path> temps = Files.newDirectoryStream(template, TEMP_PREFIX + "*")) {
                    for (Path temp : temps) {
                        deleteQuietly(temp);
                    }
                }
            }
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.atWarn().addKeyValue("path", file).setCause(e).log("an unfinished upload could not be deleted");
        }
    }

    @Override
    public String toString() {
        return "TemplateFileStore[" + dir + "]";
    }
}
