package io.agentenv.server.credentials;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;

/**
 * Resolves the API key: the configured value (AENV_API_KEY) if there is one, else the managed file
 * {@code <dataDir>/secrets/api-key} (mode 0600 in a 0700 directory), generated on first start as {@code e2b_} + 40
 * hex characters. The file is never followed through a symlink.
 */
public final class ApiKeyFile {
    private static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> OWNER_ONLY_DIR = PosixFilePermissions.fromString("rwx------");

    /** Where the key came from; {@code file} is empty when it was configured directly. */
    public record Resolved(ApiKey key, Optional<Path> file, boolean generated) {
        public Resolved {
            requireNonNull(key, "key is null");
            requireNonNull(file, "file is null");
        }
    }

    private ApiKeyFile() {}

    public static Path location(Path dataDir) {
        return dataDir.resolve("secrets").resolve("api-key");
    }

    public static Resolved resolve(Optional<String> configured, Path dataDir, SecureRandom random) {
        requireNonNull(configured, "configured is null");
        requireNonNull(dataDir, "dataDir is null");
        if (configured.isPresent()) {
            return new Resolved(ApiKey.of(configured.get()), Optional.empty(), false);
        }
        Path file = location(dataDir);
        try {
            if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                return new Resolved(read(file), Optional.of(file), false);
            }
            return generate(file, random);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or create the API key file " + file, e);
        }
    }

    private static ApiKey read(Path file) throws IOException {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("API key file is not a regular file (symlinks are refused): " + file);
        }
        return ApiKey.of(Files.readString(file, StandardCharsets.US_ASCII).strip());
    }

    private static Resolved generate(Path file, SecureRandom random) throws IOException {
        Path dir = file.getParent();
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, OWNER_ONLY_DIR);
        byte[] bytes = new byte[20];
        random.nextBytes(bytes);
        String value = "e2b_" + HexFormat.of().formatHex(bytes);
        Path tmp = Files.createTempFile(dir, ".api-key", ".tmp", PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE));
        try {
            Files.writeString(tmp, value + "\n", StandardCharsets.US_ASCII);
            try {
                // a hard link does not replace an existing file: if another process won the race, use its key
                Files.createLink(file, tmp);
            } catch (FileAlreadyExistsException raced) {
                return new Resolved(read(file), Optional.of(file), false);
            } catch (UnsupportedOperationException noLinks) {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        return new Resolved(ApiKey.of(value), Optional.of(file), true);
    }
}
