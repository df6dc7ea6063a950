package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.EnvdLayout;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.SandboxMeter;
import io.agentenv.backend.container.network.EgressFirewall;
import io.agentenv.backend.container.network.EgressPolicy;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.envd.client.EnvdAddress;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.HostNetwork;
import io.agentenv.spi.Liveness;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SnapshotState;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

/**
 * One runtime generation of one container sandbox: a runc container in its own overlay, network slot and cgroup, with
 * envd reached over TCP on its veth. Built by {@code ContainerBackendFactory#prepare} (slot and dirs reserved, nothing
 * running); {@link #start} boots or restores it according to its {@link Launch}.
 *
 * <p>Phases move by compare-and-set: PREPARED → STARTING → RUNNING → (PAUSING → PAUSED) and anything → CLOSED. The
 * orchestrator runs at most one lifecycle call at a time; {@link #guest()}, {@link #envd()} and {@link #resources()}
 * only read volatile fields.
 *
 * <p>This is the SPI face; the generation's shared state is in {@link Generation}, and each operation in its own
 * class: {@link GenerationStart}, {@link GenerationPause}, {@link GenerationCapture} (freeze, thaw, snapshot),
 * {@link GenerationLiveness} and {@link GenerationRelease}. Start, pause, capture and release are one object each for
 * all sandboxes, given the generation per call, and take the host parts they use as constructor arguments
 * ({@link ContainerSandboxes} builds the sandboxes); the states are in {@link SavedStates}.
 */
public final class ContainerSandbox implements SandboxBackend {

    public enum Phase {
        PREPARED,
        STARTING,
        RUNNING,
        PAUSING,
        PAUSED,
        CLOSED
    }

    /** Where this generation's state comes from. */
    public sealed interface Launch {
        /** A restore of the template's boot checkpoint (or a cold boot when boot arguments are given). */
        record FromTemplate(String template) implements Launch {}

        /** A restore of a snapshot (create-from-snapshot, fork child). */
        record FromSnapshot(SavedStates.Snapshot state) implements Launch {}

        /** A resume of this sandbox from its pause. */
        record FromPaused(SavedStates.Paused state) implements Launch {}

        /** Re-attached after a server restart: already running. */
        record Reattached(Lineage lineage) implements Launch {}
    }

    private final Generation gen;
    private final GenerationStart starting;
    private final GenerationPause pausing;
    private final GenerationCapture capture;
    private final GenerationRelease release;
    private final GenerationLiveness liveness;
    private final SandboxMeter meter;
    private final EnvdClients envdClients;
    private final EgressFirewall firewall;
    private final HostNetwork hostNetwork;

    /** Built by {@link ContainerSandboxes#create}; the operations are shared by every sandbox of the backend. */
    ContainerSandbox(
            Generation gen,
            GenerationStart starting,
            GenerationPause pausing,
            GenerationCapture capture,
            GenerationRelease release,
            EnvdClients envdClients,
            EgressFirewall firewall,
            SandboxMeter meter,
            Clock clock) {
        this.gen = requireNonNull(gen, "gen is null");
        this.starting = requireNonNull(starting, "starting is null");
        this.pausing = requireNonNull(pausing, "pausing is null");
        this.capture = requireNonNull(capture, "capture is null");
        this.release = requireNonNull(release, "release is null");
        this.envdClients = requireNonNull(envdClients, "envdClients is null");
        this.firewall = requireNonNull(firewall, "firewall is null");
        this.meter = requireNonNull(meter, "meter is null");
        // the member's envd client (connected, its init path run once) is this sandbox's from now on: closed with it;
        // a member made for this sandbox's id has it under that id already
        gen.warm.ifPresent(member -> gen.client(
                member.sandbox().equals(gen.spec.id())
                        ? member.envd()
                        : envdClients.handOver(member.envd(), gen.spec.id())));
        this.liveness = new GenerationLiveness(gen, clock);
        this.hostNetwork = new HostNetwork(
                gen.liveSlot().netnsPath(), address(gen.liveSlot().sandboxAddress()));
    }

    public ContainerId containerId() {
        return gen.id;
    }

    /** After a restart: the client of a container that kept running (its envd already has the spec's token). */
    public void attach() {
        gen.client(envdClients.open(gen.spec.id(), envdAddress(gen.liveSlot()), Optional.of(gen.spec.accessToken())));
        liveness.running(Optional.empty(), true);
        meter.baseline();
    }

    @Override
    public void extraBootArgs(String arguments) throws BackendException {
        starting.extraBootArgs(gen, arguments);
    }

    @Override
    public void start(Duration readyTimeout) throws BackendException {
        starting.start(gen, readyTimeout);
        liveness.running(gen.claimedProcesses(), gen.initialisedAtStart());
        meter.baseline();
    }

    /**
     * The sandbox's CPU, memory and disk read from the host ({@link SandboxMeter}: its cgroup and its disk's mount
     * point), so sampling never wakes envd; also while this backend froze it (envd could not answer then). Empty
     * unless RUNNING, or when the cgroup or disk is not where it should be (the caller then asks envd).
     */
    @Override
    public Optional<EnvdMetrics> hostMetrics() throws BackendException {
        if (gen.phase.get() != Phase.RUNNING) {
            return Optional.empty();
        }
        try {
            return meter.read();
        } catch (IOException e) {
            throw new BackendException.Recoverable(
                    "metrics of sandbox " + gen.spec.id() + " not readable from the host: " + e.getMessage(), e);
        }
    }

    /** Gone once the container's init exited; restarts of envd inside are noticed here and re-initialised. */
    @Override
    public Liveness liveness() throws BackendException {
        return liveness.check();
    }

    @Override
    public PausedState pause(PauseMode mode, Path artifactDir) throws BackendException {
        PausedState paused = pausing.pause(gen, mode, artifactDir);
        liveness.stop();
        return paused;
    }

    @Override
    public void freeze() throws BackendException {
        capture.freeze(gen);
    }

    @Override
    public void thaw() throws BackendException {
        capture.thaw(gen);
    }

    @Override
    public SnapshotState snapshot(Path artifactDir) throws BackendException {
        return capture.snapshot(gen, artifactDir);
    }

    @Override
    public void updateNetwork(NetworkPolicy policy) throws BackendException {
        requireNonNull(policy, "policy is null");
        NetSlot netSlot = gen.requireSlot();
        EgressPolicy egress;
        try {
            egress = egress(policy);
        } catch (IllegalArgumentException e) {
            throw new BackendException.Recoverable("network policy not enforceable: " + e.getMessage(), e);
        }
        try {
            firewall.apply(netSlot, egress);
        } catch (CommandFailedException e) {
            throw new BackendException.Recoverable(
                    "network rules of sandbox " + gen.spec.id() + " not updated: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Recoverable(
                    "interrupted while updating the network of sandbox " + gen.spec.id(), e);
        }
    }

    /** The user's policy on top of the host-wide rules (no other sandbox, host service or internal range, ever). */
    static EgressPolicy egress(NetworkPolicy policy) {
        EgressPolicy.Default otherwise = policy.internetAccess() == NetworkPolicy.InternetAccess.DENIED
                ? EgressPolicy.Default.DENY
                : EgressPolicy.Default.ALLOW;
        return new EgressPolicy(otherwise, policy.allowOut(), policy.denyOut());
    }

    @Override
    public Optional<HostNetwork> hostNetwork() {
        return Optional.of(hostNetwork);
    }

    @Override
    public Optional<GuestEndpoint> guest() {
        if (gen.phase.get() != Phase.RUNNING) {
            return Optional.empty();
        }
        return Optional.of(new GuestEndpoint(gen.liveSlot().sandboxAddress(), EnvdLayout.ENVD_PORT, Optional.empty()));
    }

    @Override
    public Optional<EnvdApi> envd() {
        EnvdClient current = gen.client();
        return gen.phase.get() == Phase.RUNNING && current != null ? Optional.of(current) : Optional.empty();
    }

    @Override
    public Resources resources() {
        return gen.resources;
    }

    @Override
    public void close() throws BackendException {
        liveness.stop();
        release.close(gen);
    }

    @Override
    public void kill() throws BackendException {
        liveness.stop();
        release.kill(gen);
    }

    /**
     * envd over TCP on the sandbox's veth, not its unix socket: a unix connection from the host lives in the host's
     * network namespace (the kernel creates the accepted socket in the connecting side's), where CRIU cannot find it,
     * so any open host connection would make a checkpoint fail. TCP connections are in the sandbox's namespace and
     * are cut by the checkpoint (tcp-close).
     */
    static EnvdAddress envdAddress(NetSlot slot) {
        return new EnvdAddress.Tcp(slot.sandboxAddress(), EnvdLayout.ENVD_PORT);
    }

    private static InetAddress address(String dotted) {
        try {
            return InetAddress.getByName(dotted); // a literal: no lookup
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an address: " + dotted, e);
        }
    }
}
