package io.agentenv.envd.session;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.protocol.rest.InitBody;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** The fields of {@code POST /init} envd acts on (volume mounts, hyperloop and CA bundles are not supported). */
public record InitRequest(
        Optional<String> accessToken,
        Map<String, String> envVars,
        Optional<String> defaultUser,
        Optional<String> defaultWorkdir,
        Optional<Instant> timestamp) {
    public InitRequest {
        requireNonNull(accessToken, "accessToken is null");
        requireNonNull(defaultUser, "defaultUser is null");
        requireNonNull(defaultWorkdir, "defaultWorkdir is null");
        requireNonNull(timestamp, "timestamp is null");
        envVars = Map.copyOf(envVars);
    }

    /**
     * The fields of the wire body ({@code timestamp} parsed as an ISO-8601 instant).
     *
     * @throws java.time.format.DateTimeParseException if the timestamp is not an instant
     */
    public static InitRequest from(InitBody body) {
        return new InitRequest(
                Optional.ofNullable(body.accessToken()),
                body.envVars(),
                Optional.ofNullable(body.defaultUser()),
                Optional.ofNullable(body.defaultWorkdir()),
                Optional.ofNullable(body.timestamp()).map(Instant::parse));
    }

    @Override
    public String toString() {
        return "InitRequest[accessToken=" + (accessToken.isPresent() ? "<redacted>" : "<none>") + ", envVars="
                + envVars.keySet() + ", defaultUser=" + defaultUser + ", defaultWorkdir=" + defaultWorkdir
                + ", timestamp=" + timestamp + "]";
    }
}
