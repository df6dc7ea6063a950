package io.agentenv.envd.users;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.Optional;

/** How envd turns a path sent by a client into an absolute path for one user. */
public final class UserPaths {
    private UserPaths() {}

    /**
     * Resolves {@code path} for {@code user}: {@code ~} and {@code ~/x} expand to the home directory; a relative path
     * resolves against {@code base} when present (the sandbox's default workdir), else the home directory; an empty path
     * is that directory itself. The result is absolute and normalized ({@code ..} removed lexically; symlinks are not
     * followed here).
     */
    public static Path resolve(String path, UserAccount user, Optional<Path> base) {
        requireNonNull(path, "path is null");
        requireNonNull(user, "user is null");
        requireNonNull(base, "base is null");
        if (path.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("path contains a NUL byte");
        }
        Path start = base.filter(Path::isAbsolute).orElse(user.home());
        if (path.equals("~")) {
            return user.home().normalize();
        }
        if (path.startsWith("~/")) {
            return user.home().resolve(path.substring(2)).normalize();
        }
        if (path.isEmpty()) {
            return start.normalize();
        }
        Path given = Path.of(path);
        return (given.isAbsolute() ? given : start.resolve(given)).normalize();
    }
}
