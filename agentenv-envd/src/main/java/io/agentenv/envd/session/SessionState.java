package io.agentenv.envd.session;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code POST /init} told envd about its sandbox. Immutable; {@link Session} swaps whole values.
 *
 * @param clockSkew how far the host's clock ({@code timestamp}) was ahead of envd's when last told (negative: behind)
 */
public record SessionState(
        Optional<String> accessToken,
        Map<String, String> envVars,
        Optional<String> defaultUser,
        Optional<Path> defaultWorkdir,
        Duration clockSkew) {
    public SessionState {
        requireNonNull(accessToken, "accessToken is null");
        requireNonNull(defaultUser, "defaultUser is null");
        requireNonNull(defaultWorkdir, "defaultWorkdir is null");
        requireNonNull(clockSkew, "clockSkew is null");
        envVars = Map.copyOf(envVars);
        defaultWorkdir.ifPresent(p -> {
            if (!p.isAbsolute()) {
                throw new IllegalArgumentException("defaultWorkdir must be absolute: " + p);
            }
        });
    }

    public static SessionState initial() {
        return new SessionState(Optional.empty(), Map.of(), Optional.empty(), Optional.empty(), Duration.ZERO);
    }

    @Override
    public String toString() { // never print the token
        return "SessionState[accessToken=" + (accessToken.isPresent() ? "<redacted>" : "<none>")
                + ", envVars=" + envVars.keySet() + ", defaultUser=" + defaultUser
                + ", defaultWorkdir=" + defaultWorkdir + ", clockSkew=" + clockSkew + "]";
    }
}
