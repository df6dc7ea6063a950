package io.agentenv.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The user's saved login ({@code aenv auth login}): the API URL and key in {@code $XDG_CONFIG_HOME/aenv/config}, else
 * {@code ~/.config/aenv/config}, as {@code api_url=...} and {@code api_key=...} lines. The file is created with mode
 * 0600 (its directory 0700) and replaced atomically. It is read only when the flags and {@code AENV_API_URL} /
 * {@code AENV_API_KEY} leave a setting open: those win.
 */
final class UserConfig {
    static final String URL = "api_url";
    static final String KEY = "api_key";

    private final Path file;

    private UserConfig(Path file) {
        this.file = file;
    }

    /** The config file of the user {@code env} describes ({@code XDG_CONFIG_HOME}, else {@code HOME}). */
    static UserConfig of(Map<String, String> env) {
        String xdg = env.get("XDG_CONFIG_HOME");
        Path base;
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            base = Path.of(xdg);
        } else {
            String home = env.getOrDefault("HOME", System.getProperty("user.home"));
            base = Path.of(home, ".config");
        }
        return new UserConfig(base.resolve("aenv").resolve("config"));
    }

    Path file() {
        return file;
    }

    /** The saved settings; empty when there is no file. */
    Map<String, String> read() {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return Map.of();
        } catch (IOException e) {
            throw new ApiException(0, "cannot read " + file + ": " + ApiException.describe(e));
        }
        Map<String, String> settings = new LinkedHashMap<>();
        for (String line : lines) {
            int eq = line.indexOf('=');
            if (!line.isBlank() && !line.startsWith("#") && eq > 0) {
                settings.put(
                        line.substring(0, eq).strip(), line.substring(eq + 1).strip());
            }
        }
        return settings;
    }

    Optional<String> get(String name) {
        return Optional.ofNullable(read().get(name)).filter(v -> !v.isEmpty());
    }

    /** Replaces the file with these settings, readable by its owner only from the moment it exists. */
    void write(Map<String, String> settings) {
        StringBuilder text = new StringBuilder("# aenv auth login; aenv auth logout deletes this file\n");
        settings.forEach((k, v) -> {
            if (v.contains("\n") || v.contains("\r")) {
                throw new IllegalArgumentException(k + " must be one line");
            }
            text.append(k).append('=').append(v).append('\n');
        });
        Path dir = file.getParent();
        try {
            try {
                Files.createDirectories(dir.getParent());
                Files.createDirectory(
                        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException e) {
                // kept as it is: the user's own directory
            }
            Path partial = Files.createTempFile(
                    dir,
                    ".config",
                    ".part",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                Files.writeString(partial, text, StandardCharsets.UTF_8);
                try {
                    Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(partial);
            }
        } catch (IOException e) {
            throw new ApiException(0, "cannot write " + file + ": " + ApiException.describe(e));
        }
    }

    /** Deletes the file; false when there was none. */
    boolean delete() {
        try {
            return Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new ApiException(0, "cannot delete " + file + ": " + ApiException.describe(e));
        }
    }
}
