package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * The body of envd's {@code POST /init}.
 *
 * @param accessToken    the token envd requires from then on ({@code X-Access-Token}); empty for an open envd
 * @param envVars        environment every process gets (copied)
 * @param defaultUser    the user processes run as when a call names none
 * @param defaultWorkdir the working directory when a call names none
 * @param timestamp      the host's clock, to sync the guest's
 */
public record EnvdInit(
        Optional<AccessToken> accessToken,
        Map<String, String> envVars,
        Optional<String> defaultUser,
        Optional<String> defaultWorkdir,
        Instant timestamp) {
    public EnvdInit {
        requireNonNull(accessToken, "accessToken is null");
        envVars = Map.copyOf(requireNonNull(envVars, "envVars is null"));
        requireNonNull(defaultUser, "defaultUser is null");
        requireNonNull(defaultWorkdir, "defaultWorkdir is null");
        requireNonNull(timestamp, "timestamp is null");
        defaultUser.ifPresent(u -> requireNotBlank(u, "defaultUser"));
        defaultWorkdir.ifPresent(w -> requireNotBlank(w, "defaultWorkdir"));
    }

    private static void requireNotBlank(String value, String name) {
        if (value.isBlank()) {
            throw new IllegalArgumentException(name + " is blank");
        }
    }
}
