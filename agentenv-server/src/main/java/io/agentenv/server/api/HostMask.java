package io.agentenv.server.api;

import io.agentenv.orchestrator.AgentEnvException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * E2B's {@code network.maskRequestHost}: the Host header the sandbox proxy sends to the sandbox's ports other than
 * envd's, {@code ${PORT}} standing for the port the request goes to (for example {@code localhost:${PORT}}). A
 * host name or IP literal with an optional port; empty or absent: requests keep the Host they were sent with.
 */
final class HostMask {
    static final String PORT_PLACEHOLDER = "${PORT}";
    private static final int MAX_LENGTH = 255;
    private static final Pattern HOST_AND_PORT =
            Pattern.compile("(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\\[[0-9A-Fa-f:.]+])(?::[0-9]{1,5})?");

    private HostMask() {}

    /** The mask to store, or empty; INVALID_ARGUMENT naming the field when it is not a host with an optional port. */
    static Optional<String> parse(String mask) {
        if (mask == null || mask.isEmpty()) {
            return Optional.empty();
        }
        String sample = mask.replace(PORT_PLACEHOLDER, "1");
        if (mask.length() > MAX_LENGTH || !HOST_AND_PORT.matcher(sample).matches()) {
            throw AgentEnvException.invalidArgument("network.maskRequestHost must be a host name or IP address with an "
                    + "optional port, " + PORT_PLACEHOLDER + " standing for the sandbox port (for example localhost:"
                    + PORT_PLACEHOLDER + "), was '"
                    + SandboxEndpoints.clip(mask).replaceAll("\\p{Cntrl}", "?") + "'");
        }
        return Optional.of(mask);
    }
}
