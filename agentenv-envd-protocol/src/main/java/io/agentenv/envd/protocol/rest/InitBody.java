package io.agentenv.envd.protocol.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The body of {@code POST /init}: {@code {"accessToken"?,"envVars":{..},"defaultUser"?,"defaultWorkdir"?,
 * "timestamp"?}}, the timestamp as an ISO-8601 instant. The token is never part of {@link #toString()}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record InitBody(
        String accessToken, Map<String, String> envVars, String defaultUser, String defaultWorkdir, String timestamp) {
    public InitBody {
        // kept in the caller's order, so the body lists the variables as they were given
        envVars = envVars == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(envVars));
    }

    @Override
    public String toString() {
        return "InitBody[accessToken=" + (accessToken == null ? "<none>" : "<redacted>") + ", envVars="
                + envVars.keySet() + ", defaultUser=" + defaultUser + ", defaultWorkdir=" + defaultWorkdir
                + ", timestamp=" + timestamp + "]";
    }
}
