package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.ApiError;
import io.agentenv.api.model.ListedSandbox;
import io.agentenv.api.model.OnTimeout;
import io.agentenv.api.model.Sandbox;
import io.agentenv.api.model.SandboxDetail;
import io.agentenv.api.model.SandboxLifecycle;
import io.agentenv.api.model.SandboxNetworkConfig;
import io.agentenv.api.model.SandboxState;
import io.agentenv.api.model.SandboxVolumeMount;
import io.agentenv.api.model.SnapshotInfo;
import io.agentenv.orchestrator.ForkResult;
import io.agentenv.orchestrator.SandboxView;
import io.agentenv.orchestrator.SnapshotView;
import io.agentenv.orchestrator.TimeoutAction;
import io.agentenv.server.credentials.SandboxTokens;
import io.agentenv.spi.NetworkPolicy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Domain views to E2B wire records. The projection of internal states onto E2B's {@code running}/{@code paused}
 * happens here and nowhere else.
 */
final class WireMapping {
    /** The envd version reported to SDKs: a semver at or above 0.6.4 unlocks every SDK feature. */
    static final String ENVD_VERSION = "0.6.13";
    /** E2B reports "no TTL" as a far-away end. */
    private static final Duration NO_TTL = Duration.ofDays(365L * 100);

    private final SandboxTokens tokens;
    private final Supplier<String> domain;
    private final Clock clock;

    /** {@code domain}: the {@code domain} every sandbox is reported with (read per answer). */
    WireMapping(SandboxTokens tokens, Supplier<String> domain, Clock clock) {
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.domain = requireNonNull(domain, "domain is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    static SandboxState project(io.agentenv.orchestrator.SandboxState state) {
        return switch (state) {
            case CREATING, RESUMING, RUNNING, SNAPSHOTTING, FORKING, KILLING -> SandboxState.RUNNING;
            case PAUSING, PAUSED -> SandboxState.PAUSED;
        };
    }

    /** The internal states a wire state stands for (list filters). */
    static Set<io.agentenv.orchestrator.SandboxState> expand(SandboxState state) {
        Set<io.agentenv.orchestrator.SandboxState> states = EnumSet.noneOf(io.agentenv.orchestrator.SandboxState.class);
        for (io.agentenv.orchestrator.SandboxState s : io.agentenv.orchestrator.SandboxState.visible()) {
            if (project(s) == state) {
                states.add(s);
            }
        }
        return states;
    }

    Sandbox sandbox(SandboxView view) {
        String id = view.id().value();
        return new Sandbox(
                view.template().value(),
                id,
                view.alias().orElse(null),
                "",
                ENVD_VERSION,
                tokens.envdAccessToken(id),
                trafficToken(view),
                domain.get());
    }

    SandboxDetail detail(SandboxView view) {
        String id = view.id().value();
        return new SandboxDetail(
                view.template().value(),
                view.alias().orElse(null),
                id,
                "",
                view.startedAt(),
                endAt(view),
                ENVD_VERSION,
                tokens.envdAccessToken(id),
                domain.get(),
                view.resources().cpuCount(),
                view.resources().memoryMiB(),
                view.resources().diskSizeMiB(),
                view.metadata(),
                project(view.state()),
                internetAccess(view.network()),
                network(view.network(), view.maskRequestHost()),
                new SandboxLifecycle(
                        view.autoResume(), view.onTimeout() == TimeoutAction.PAUSE ? OnTimeout.PAUSE : OnTimeout.KILL),
                volumeMounts(view));
    }

    ListedSandbox listed(SandboxView view) {
        return new ListedSandbox(
                view.template().value(),
                view.alias().orElse(null),
                view.id().value(),
                "",
                view.startedAt(),
                endAt(view),
                view.resources().cpuCount(),
                view.resources().memoryMiB(),
                view.resources().diskSizeMiB(),
                view.metadata(),
                project(view.state()),
                ENVD_VERSION,
                volumeMounts(view));
    }

    /** E2B's {@code volumeMounts}: each volume by name, and this server's {@code readOnly} when it is. */
    static List<SandboxVolumeMount> volumeMounts(SandboxView view) {
        return view.volumes().stream()
                .map(v -> new SandboxVolumeMount(v.name(), v.path(), v.readOnly() ? Boolean.TRUE : null))
                .toList();
    }

    static SnapshotInfo snapshot(SnapshotView view) {
        return new SnapshotInfo(
                view.id().value(),
                view.names(),
                view.resources().cpuCount(),
                view.resources().memoryMiB(),
                view.resources().diskSizeMiB(),
                view.createdAt(),
                view.updatedAt());
    }

    io.agentenv.api.model.SandboxForkResult forkResult(ForkResult result) {
        return switch (result) {
            case ForkResult.Child child -> io.agentenv.api.model.SandboxForkResult.of(sandbox(child.sandbox()));
            case ForkResult.Failed failed ->
                io.agentenv.api.model.SandboxForkResult.of(
                        new ApiError(ErrorStatus.of(failed.kind()), failed.message()));
        };
    }

    private String trafficToken(SandboxView view) {
        return view.network().publicTraffic() == NetworkPolicy.PublicTraffic.TOKEN_REQUIRED
                ? tokens.trafficAccessToken(view.id().value())
                : null;
    }

    /**
     * When its TTL runs out. A sandbox still starting or resuming (on the wire: running) has no expiry yet, since its
     * TTL starts when it runs: it ends its timeout from now at the earliest. A paused one never expires.
     */
    private Instant endAt(SandboxView view) {
        return view.expiresAt().orElseGet(() -> switch (view.state()) {
            case CREATING, RESUMING -> clock.instant().plus(view.timeout());
            case RUNNING, SNAPSHOTTING, FORKING, PAUSING, PAUSED, KILLING ->
                clock.instant().plus(NO_TTL);
        });
    }

    private static Boolean internetAccess(NetworkPolicy policy) {
        return switch (policy.internetAccess()) {
            case DEFAULT -> null;
            case ALLOWED -> true;
            case DENIED -> false;
        };
    }

    private static SandboxNetworkConfig network(NetworkPolicy policy, Optional<String> maskRequestHost) {
        if (!policy.hasExplicitRules() && maskRequestHost.isEmpty()) {
            return null;
        }
        return new SandboxNetworkConfig(
                policy.publicTraffic() == NetworkPolicy.PublicTraffic.ALLOWED,
                policy.allowOut(),
                policy.denyOut(),
                maskRequestHost.orElse(null));
    }
}
