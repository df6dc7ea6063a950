package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A sandbox as clients see it, read at one moment.
 *
 * @param template   the resolved template or snapshot id it was launched from
 * @param alias      the name the client used when it was not the id itself (for example {@code base} or a snapshot name)
 * @param startedAt  when it was created (fork children: when forked); list order and cursors use it
 * @param expiresAt  when the TTL runs out; empty unless RUNNING-ish (paused sandboxes never expire)
 * @param timeout    the last TTL duration set (fork children inherit it)
 * @param maskRequestHost the Host header proxied requests to its ports carry ({@code ${PORT}} not yet replaced)
 */
public record SandboxView(
        SandboxId id,
        TemplateId template,
        Optional<String> alias,
        SandboxState state,
        Instant startedAt,
        Optional<Instant> expiresAt,
        Duration timeout,
        TimeoutAction onTimeout,
        boolean autoResume,
        boolean secure,
        Resources resources,
        Map<String, String> metadata,
        NetworkPolicy network,
        Optional<String> maskRequestHost,
        List<VolumeAttachment> volumes) {
    public SandboxView {
        requireNonNull(id, "id is null");
        requireNonNull(template, "template is null");
        requireNonNull(alias, "alias is null");
        requireNonNull(state, "state is null");
        requireNonNull(startedAt, "startedAt is null");
        requireNonNull(expiresAt, "expiresAt is null");
        requireNonNull(timeout, "timeout is null");
        requireNonNull(onTimeout, "onTimeout is null");
        requireNonNull(resources, "resources is null");
        metadata = Map.copyOf(metadata);
        requireNonNull(network, "network is null");
        requireNonNull(maskRequestHost, "maskRequestHost is null");
        volumes = List.copyOf(volumes);
    }

    /** The record as clients see it: a sandbox that is not running has no expiry. */
    static SandboxView of(SandboxRecord r) {
        Optional<Instant> expiresAt = switch (r.state()) {
            case PAUSING, PAUSED, KILLING -> Optional.empty();
            case CREATING, RESUMING, RUNNING, SNAPSHOTTING, FORKING -> r.expiresAt();
        };
        return new SandboxView(
                r.id(),
                r.template(),
                r.alias(),
                r.state(),
                r.startedAt(),
                expiresAt,
                r.timeout(),
                r.onTimeout(),
                r.autoResume(),
                r.secure(),
                r.resources(),
                r.metadata(),
                r.network(),
                r.maskRequestHost(),
                r.volumes());
    }
}
