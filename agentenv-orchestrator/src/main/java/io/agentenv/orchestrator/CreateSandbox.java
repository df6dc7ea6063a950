package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A create request after the API applied its defaults (v1 vs v2 timeout, secure, onTimeout).
 *
 * @param template              a built-in template id (for example {@code base}) or a snapshot id or alias
 * @param timeout               TTL from the moment the sandbox is running; zero expires it on the next eviction tick
 * @param onTimeout             what the TTL does when it runs out
 * @param timeoutPauseMode      how an onTimeout=PAUSE pause is taken (E2B autoPauseMemory)
 * @param autoResume            whether the proxy may resume the sandbox when traffic arrives while it is paused
 * @param envVars               default environment of every process in the sandbox
 * @param metadata              user key/values, returned by get/list and matched by list filters
 * @param network               requested network policy (validated by the orchestrator)
 * @param customExtensionParams raw JSON object text, {@code "{}"} when empty (the API re-serialises what it parsed)
 * @param secure                recorded and reported; the envd access token is issued either way
 * @param maskRequestHost       the Host header proxied requests to the sandbox's ports (not envd's) carry, with
 *                              {@code ${PORT}} replaced by the port; empty: the caller's Host is kept
 * @param volumeMounts          volumes to mount, by name or id; a create from a snapshot mounts the snapshot's
 *                              volumes, and may name them again but not others
 */
public record CreateSandbox(
        String template,
        Duration timeout,
        TimeoutAction onTimeout,
        PauseMode timeoutPauseMode,
        boolean autoResume,
        Map<String, String> envVars,
        Map<String, String> metadata,
        NetworkPolicy network,
        String customExtensionParams,
        boolean secure,
        Optional<String> maskRequestHost,
        List<VolumeMountRequest> volumeMounts) {
    public CreateSandbox {
        requireNonNull(template, "template is null");
        requireNonNull(timeout, "timeout is null");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout is negative: " + timeout);
        }
        requireNonNull(onTimeout, "onTimeout is null");
        requireNonNull(timeoutPauseMode, "timeoutPauseMode is null");
        envVars = Map.copyOf(envVars);
        metadata = Map.copyOf(metadata);
        requireNonNull(network, "network is null");
        requireNonNull(customExtensionParams, "customExtensionParams is null");
        requireNonNull(maskRequestHost, "maskRequestHost is null");
        volumeMounts = List.copyOf(volumeMounts);
    }

    /** A request with defaults for everything but the template and timeout (tests and simple callers). */
    public static CreateSandbox of(String template, Duration timeout) {
        return new CreateSandbox(
                template,
                timeout,
                TimeoutAction.KILL,
                PauseMode.WITH_MEMORY,
                false,
                Map.of(),
                Map.of(),
                NetworkPolicy.DEFAULT,
                "{}",
                true,
                Optional.empty(),
                List.of());
    }
}
