package io.agentenv.envd.users;

import static java.util.Objects.requireNonNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * How envd turns a path sent by a client into an absolute path for one user: the one rule every {@code /files} route,
 * every filesystem RPC and a process's working directory go through (E2B's envd rule).
 */
public final class UserPaths {
    private UserPaths() {}

    /**
     * Resolves {@code path} for {@code user}: an empty path is the sandbox's default workdir ({@code defaultWorkdir},
     * when {@code /init} set one) or else the user's home; {@code ~} and {@code ~/x} expand to the home; any other
     * relative path resolves against the requesting user's home (root's {@code a.txt} is {@code /root/a.txt}, whatever
     * the default workdir); an absolute path stays as it is. The home is the user's passwd entry. The result is
     * absolute and normalized ({@code ..} removed lexically; symlinks are not followed here: the operations guard
     * against them where they write).
     */
    public static Path resolve(String path, UserAccount user, Optional<Path> defaultWorkdir) {
        requireNonNull(path, "path is null");
        requireNonNull(user, "user is null");
        requireNonNull(defaultWorkdir, "defaultWorkdir is null");
        if (path.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("path contains a NUL byte");
        }
        Path home = home(user);
        if (path.isEmpty()) {
            return defaultWorkdir.filter(Path::isAbsolute).orElse(home).normalize();
        }
        if (path.equals("~")) {
            return home;
        }
        if (path.startsWith("~/")) {
            return home.resolve(path.substring(2)).normalize();
        }
        Path given = Path.of(path);
        return (given.isAbsolute() ? given : home.resolve(given)).normalize();
    }

    /**
     * The working directory of a process started without one: what {@link #resolve} makes of the empty path when it is
     * an existing directory, else the user's home, else {@code /}.
     */
    public static Path defaultDirectory(UserAccount user, Optional<Path> defaultWorkdir) {
        Path dir = resolve("", user, defaultWorkdir);
        if (Files.isDirectory(dir)) {
            return dir;
        }
        Path home = home(user);
        return Files.isDirectory(home) ? home : Path.of("/");
    }

    private static Path home(UserAccount user) {
        return user.home().normalize(); // absolute: UserAccount refuses a relative home
    }
}
