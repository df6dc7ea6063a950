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

    /** A record of a sandbox that mounts no volume. */
    public SandboxRecord(
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
            GuestDefaults guestDefaults) {
        this(
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
                List.of());
    }

    /** A record whose proxied requests keep their Host header. */
    public SandboxRecord(
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
            Optional<UUID> instanceId) {
        this(
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
                Optional.empty(),
                GuestDefaults.NONE);
    }

    /** A record of a sandbox with the server's default user and working directory. */
    public SandboxRecord(
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
            Optional<String> maskRequestHost) {
        this(
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
                GuestDefaults.NONE);
    }

    public SandboxRecord withState(SandboxState newState) {
        return new SandboxRecord(
                id,
                template,
                alias,
                newState,
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

    public SandboxRecord withTtl(Duration newTimeout, Optional<Instant> newExpiresAt) {
        return new SandboxRecord(
                id,
                template,
                alias,
                state,
                startedAt,
                newTimeout,
                newExpiresAt,
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

    public SandboxRecord withPaused(Optional<StoredState> newPaused) {
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
                newPaused,
                instanceId,
                maskRequestHost,
                guestDefaults,
                volumes);
    }

    SandboxRecord withResources(Resources newResources) {
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
                newResources,
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

    public SandboxRecord withMetadata(Map<String, String> newMetadata) {
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
                newMetadata,
                envVars,
                network,
                customExtensionParams,
                paused,
                instanceId,
                maskRequestHost,
                guestDefaults,
                volumes);
    }

    public SandboxRecord withNetwork(NetworkPolicy newNetwork) {
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
                newNetwork,
                customExtensionParams,
                paused,
                instanceId,
                maskRequestHost,
                guestDefaults,
                volumes);
    }

    public SandboxRecord withCustomExtensionParams(String params) {
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
                params,
                paused,
                instanceId,
                maskRequestHost,
                guestDefaults,
                volumes);
    }

    /** The runtime instance that was (or is being) started for this sandbox; recorded before its start hook is sent. */
    public SandboxRecord withInstanceId(UUID newInstanceId) {
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
                Optional.of(newInstanceId),
                maskRequestHost,
                guestDefaults,
                volumes);
    }

    /** A fork child: same settings, new id, started now, running with a fresh TTL, no paused state. */
    SandboxRecord forChild(SandboxId childId, Instant now, Duration childTimeout, SandboxState childState) {
        return new SandboxRecord(
                childId,
                template,
                alias,
                childState,
                now,
                childTimeout,
                Optional.empty(),
                onTimeout,
                timeoutPauseMode,
                autoResume,
                secure,
                resources,
                metadata,
                envVars,
                network,
                customExtensionParams,
                Optional.empty(),
                Optional.empty(),
                maskRequestHost,
                guestDefaults,
                volumes);
    }
}
