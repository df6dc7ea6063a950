package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * What the store keeps per sandbox, running or paused. {@code paused} is present exactly when a pause produced a state
 * that a resume can use (PAUSED, and RESUMING while it is being used). {@code instanceId} is the custom-extension
 * identity of the newest runtime instance (UUIDv7), written before that instance's start hook is sent; a fork child
 * starts without one. {@code maskRequestHost} is the Host header the proxy sends to the sandbox's ports other than envd's
 * ({@code ${PORT}} replaced by the port; E2B's {@code network.maskRequestHost}), fixed at create and kept by forks.
 * {@code guestDefaults} are the user and working directory of its template (see {@link GuestDefaults}).
 * {@code volumes} are the volumes it mounts, fixed at create and kept by its fork children and snapshots.
 */
public record SandboxRecord(
        SandboxId id,
        TemplateId template,
        Optional<String> alias,
        SandboxState state,
        Instant startedAt,
        Duration timeout,
        Optional<Instant> expiresAt,
        TimeoutAction onTimeout,
        PauseMode timeoutPauseMode,
        boolean autoResume,
        boolean secure,
        Resources resources,
        Map<String, String> metadata,
        Map<String, String> envVars,
        NetworkPolicy network,
        String customExtensionParams,
        Optional<StoredState> paused,
        Optional<UUID> instanceId,
        Optional<String> maskRequestHost,
        GuestDefaults guestDefaults,
        List<VolumeAttachment> volumes) {
    public SandboxRecord {
        requireNonNull(id, "id is null");
        requireNonNull(template, "template is null");
        requireNonNull(alias, "alias is null");
        requireNonNull(state, "state is null");
        requireNonNull(startedAt, "startedAt is null");
        requireNonNull(timeout, "timeout is null");
        requireNonNull(expiresAt, "expiresAt is null");
        requireNonNull(onTimeout, "onTimeout is null");
        requireNonNull(timeoutPauseMode, "timeoutPauseMode is null");
        requireNonNull(resources, "resources is null");
        metadata = Map.copyOf(metadata);
        envVars = Map.copyOf(envVars);
        requireNonNull(network, "network is null");
        requireNonNull(customExtensionParams, "customExtensionParams is null");
        requireNonNull(paused, "paused is null");
        requireNonNull(instanceId, "instanceId is null");
        requireNonNull(maskRequestHost, "maskRequestHost is null");
        requireNonNull(guestDefaults, "guestDefaults is null");
        volumes = List.copyOf(volumes);
    }

    public SandboxRecord withState(SandboxState newState) {
        return toBuilder().state(newState).build();
    }

    public SandboxRecord withTtl(Duration newTimeout, Optional<Instant> newExpiresAt) {
        return toBuilder().timeout(newTimeout).expiresAt(newExpiresAt).build();
    }

    public SandboxRecord withPaused(Optional<StoredState> newPaused) {
        return toBuilder().paused(newPaused).build();
    }

    SandboxRecord withResources(Resources newResources) {
        return toBuilder().resources(newResources).build();
    }

    public SandboxRecord withMetadata(Map<String, String> newMetadata) {
        return toBuilder().metadata(newMetadata).build();
    }

    public SandboxRecord withNetwork(NetworkPolicy newNetwork) {
        return toBuilder().network(newNetwork).build();
    }

    public SandboxRecord withCustomExtensionParams(String params) {
        return toBuilder().customExtensionParams(params).build();
    }

    /** The runtime instance that was (or is being) started for this sandbox; recorded before its start hook is sent. */
    public SandboxRecord withInstanceId(UUID newInstanceId) {
        return toBuilder().instanceId(Optional.of(newInstanceId)).build();
    }

    /** A fork child: same settings, new id, started now, running with a fresh TTL, no paused state. */
    SandboxRecord forChild(SandboxId childId, Instant now, Duration childTimeout, SandboxState childState) {
        return toBuilder()
                .id(childId)
                .state(childState)
                .startedAt(now)
                .timeout(childTimeout)
                .expiresAt(Optional.empty())
                .paused(Optional.empty())
                .instanceId(Optional.empty())
                .build();
    }

    /** A copy of this record to change components of: {@code record.toBuilder().state(RUNNING).build()}. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /** Changes some components of a record; {@link #build} checks the result as the record's constructor does. */
    public static final class Builder {
        private SandboxId id;
        private final TemplateId template;
        private final Optional<String> alias;
        private SandboxState state;
        private Instant startedAt;
        private Duration timeout;
        private Optional<Instant> expiresAt;
        private final TimeoutAction onTimeout;
        private final PauseMode timeoutPauseMode;
        private final boolean autoResume;
        private final boolean secure;
        private Resources resources;
        private Map<String, String> metadata;
        private final Map<String, String> envVars;
        private NetworkPolicy network;
        private String customExtensionParams;
        private Optional<StoredState> paused;
        private Optional<UUID> instanceId;
        private Optional<String> maskRequestHost;
        private GuestDefaults guestDefaults;
        private final List<VolumeAttachment> volumes;

        private Builder(SandboxRecord from) {
            id = from.id;
            template = from.template;
            alias = from.alias;
            state = from.state;
            startedAt = from.startedAt;
            timeout = from.timeout;
            expiresAt = from.expiresAt;
            onTimeout = from.onTimeout;
            timeoutPauseMode = from.timeoutPauseMode;
            autoResume = from.autoResume;
            secure = from.secure;
            resources = from.resources;
            metadata = from.metadata;
            envVars = from.envVars;
            network = from.network;
            customExtensionParams = from.customExtensionParams;
            paused = from.paused;
            instanceId = from.instanceId;
            maskRequestHost = from.maskRequestHost;
            guestDefaults = from.guestDefaults;
            volumes = from.volumes;
        }

        public Builder id(SandboxId value) {
            id = value;
            return this;
        }

        public Builder state(SandboxState value) {
            state = value;
            return this;
        }

        public Builder startedAt(Instant value) {
            startedAt = value;
            return this;
        }

        public Builder timeout(Duration value) {
            timeout = value;
            return this;
        }

        public Builder expiresAt(Optional<Instant> value) {
            expiresAt = value;
            return this;
        }

        public Builder resources(Resources value) {
            resources = value;
            return this;
        }

        public Builder metadata(Map<String, String> value) {
            metadata = value;
            return this;
        }

        public Builder network(NetworkPolicy value) {
            network = value;
            return this;
        }

        public Builder customExtensionParams(String value) {
            customExtensionParams = value;
            return this;
        }

        public Builder paused(Optional<StoredState> value) {
            paused = value;
            return this;
        }

        public Builder instanceId(Optional<UUID> value) {
            instanceId = value;
            return this;
        }

        public Builder maskRequestHost(Optional<String> value) {
            maskRequestHost = value;
            return this;
        }

        public Builder guestDefaults(GuestDefaults value) {
            guestDefaults = value;
            return this;
        }

        public SandboxRecord build() {
            return new SandboxRecord(
                    id,
                    template,
                    alias,
                    state,
                    startedAt,
                    timeout,
                    expiresAt,
                    onTimeout,
                    timeoutPauseMode,
                    autoResume,
                    secure,
                    resources,
                    metadata,
                    envVars,
                    network,
                    customExtensionParams,
                    paused,
                    instanceId,
                    maskRequestHost,
                    guestDefaults,
                    volumes);
        }
    }
}
