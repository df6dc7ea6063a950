package io.agentenv.backend.mock;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.HostNetwork;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.Liveness;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SnapshotState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/** One fake sandbox instance. Its {@link Status} lets tests see what the orchestrator did to it. */
public final class MockSandbox implements SandboxBackend {
    public enum Status {
        PREPARED,
        RUNNING,
        FROZEN,
        /** Paused to disk: stopped, state written to the artifact dir. */
        STOPPED,
        /** A terminal failure happened; only close() is allowed. */
        BROKEN,
        /** Its processes died on their own ({@link #die}): {@link #liveness()} reports it gone; close() releases it. */
        DEAD,
        CLOSED
    }

    static final String ARTIFACT_FILE = "mock-state";

    /** What {@link #hostMetrics()} answers for a running instance: a reading, empty, or a failure. */
    @FunctionalInterface
    public interface HostReading {
        Optional<EnvdMetrics> read() throws BackendException;
    }

    private final MockBackendFactory factory;
    private final LaunchSpec spec;
    private final LaunchSource source;
    private final Resources resources;
    private final HostNetwork hostNetwork;
    private final AtomicReference<Optional<String>> bootArgs = new AtomicReference<>(Optional.empty());
    private final AtomicReference<Status> status = new AtomicReference<>(Status.PREPARED);
    private volatile NetworkPolicy network;
    private final FakeEnvd envd;
    private volatile boolean guestConnected = true;
    private volatile String deathReason = "";
    private volatile HostReading hostReading = Optional::empty;
    private final AtomicInteger hostReads = new AtomicInteger();

    MockSandbox(
            MockBackendFactory factory,
            LaunchSpec spec,
            LaunchSource source,
            Resources resources,
            HostNetwork hostNetwork) {
        this.factory = requireNonNull(factory, "factory is null");
        this.spec = requireNonNull(spec, "spec is null");
        this.source = requireNonNull(source, "source is null");
        this.resources = requireNonNull(resources, "resources is null");
        this.hostNetwork = requireNonNull(hostNetwork, "hostNetwork is null");
        this.network = spec.network();
        this.envd = new FakeEnvd(resources, Clock.systemUTC());
    }

    public LaunchSpec spec() {
        return spec;
    }

    public LaunchSource source() {
        return source;
    }

    public Status status() {
        return status.get();
    }

    public NetworkPolicy network() {
        return network;
    }

    /** This instance's guest agent (one per instance, so one per runtime generation), connected or not. */
    public FakeEnvd fakeEnvd() {
        return envd;
    }

    /** The guest agent's connection drops while the instance keeps running: {@link #envd()} is empty from now on. */
    public void disconnectGuest() {
        guestConnected = false;
    }

    /**
     * The instance dies on its own, as a container whose init was killed: its guest agent stops answering, every later
     * lifecycle call fails and {@link #liveness()} reports it gone. Only a started (running or frozen) instance can die.
     */
    public void die(String reason) {
        requireNonNull(reason, "reason is null");
        deathReason = reason;
        Status before = status.getAndUpdate(s -> s == Status.RUNNING || s == Status.FROZEN ? Status.DEAD : s);
        if (before != Status.RUNNING && before != Status.FROZEN) {
            throw new IllegalStateException("only a running or frozen mock sandbox can die, not a " + before + " one");
        }
        envd.disconnect();
    }

    /** Gone once {@link #die}d; alive otherwise (the orchestrator asks started instances only). */
    @Override
    public Liveness liveness() throws BackendException {
        factory.enter(MockOp.LIVENESS, this);
        return status.get() == Status.DEAD ? new Liveness.Gone(deathReason) : Liveness.ALIVE;
    }

    /**
     * Scripts {@link #hostMetrics()}: by default a mock instance has no host-side reading (empty), so the orchestrator
     * samples its {@link FakeEnvd}; a test of the host path gives it readings (or failures) here.
     */
    public void hostMetrics(HostReading reading) {
        hostReading = requireNonNull(reading, "reading is null");
    }

    /** How often {@link #hostMetrics()} was asked. */
    public int hostMetricsReads() {
        return hostReads.get();
    }

    /** The scripted host reading while RUNNING or FROZEN (like {@link #envd()}); empty otherwise and by default. */
    @Override
    public Optional<EnvdMetrics> hostMetrics() throws BackendException {
        hostReads.incrementAndGet();
        Status now = status.get();
        return now == Status.RUNNING || now == Status.FROZEN ? hostReading.read() : Optional.empty();
    }

    /** The extra boot arguments handed over before start (custom extension start-fresh), if any. */
    public Optional<String> bootArgs() {
        return bootArgs.get();
    }

    /** A fake namespace path and a host IP unique to this instance (a resumed sandbox gets a new one). */
    @Override
    public Optional<HostNetwork> hostNetwork() {
        return Optional.of(hostNetwork);
    }

    @Override
    public void extraBootArgs(String arguments) throws BackendException {
        requireNonNull(arguments, "arguments is null");
        expect(Status.PREPARED, "take boot arguments for");
        if (!bootArgs.compareAndSet(Optional.empty(), Optional.of(arguments))) {
            throw new BackendException.Terminal("boot arguments were already given to this mock sandbox");
        }
    }

    @Override
    public void start(Duration readyTimeout) throws BackendException {
        factory.enter(MockOp.START, this);
        expect(Status.PREPARED, "start");
        try {
            envd.health();
            envd.init(new EnvdInit(
                    Optional.of(spec.accessToken()),
                    spec.envVars(),
                    Optional.of(spec.defaultUser()),
                    spec.defaultWorkdir(),
                    Clock.systemUTC().instant()));
        } catch (EnvdException e) {
            throw new BackendException.Terminal("fake envd did not come up", e);
        }
        status.set(Status.RUNNING);
    }

    @Override
    public PausedState pause(PauseMode mode, Path artifactDir) throws BackendException {
        factory.enter(MockOp.PAUSE, this);
        expect(Status.RUNNING, "pause");
        MockPausedState state = new MockPausedState(mode, resources, spec.id().value(), artifactDir);
        writeArtifact(artifactDir, state.encode());
        keepGuestLogs(artifactDir);
        status.set(Status.STOPPED);
        envd.disconnect();
        factory.stopped(this);
        return state;
    }

    @Override
    public void freeze() throws BackendException {
        factory.enter(MockOp.FREEZE, this);
        if (status.get() == Status.FROZEN) {
            return;
        }
        expect(Status.RUNNING, "freeze");
        status.set(Status.FROZEN);
    }

    @Override
    public void thaw() throws BackendException {
        factory.enter(MockOp.THAW, this);
        if (status.get() == Status.RUNNING) {
            return;
        }
        expect(Status.FROZEN, "thaw");
        status.set(Status.RUNNING);
    }

    @Override
    public SnapshotState snapshot(Path artifactDir) throws BackendException {
        factory.enter(MockOp.SNAPSHOT, this);
        expect(Status.RUNNING, "snapshot");
        MockSnapshotState state = new MockSnapshotState(resources, spec.id().value());
        writeArtifact(artifactDir, state.encode());
        return state;
    }

    @Override
    public void updateNetwork(NetworkPolicy policy) throws BackendException {
        requireNonNull(policy, "policy is null");
        factory.enter(MockOp.UPDATE_NETWORK, this);
        expect(Status.RUNNING, "update the network of");
        network = policy;
    }

    @Override
    public Optional<GuestEndpoint> guest() {
        Status now = status.get();
        return now == Status.RUNNING || now == Status.FROZEN ? factory.guestEndpoint() : Optional.empty();
    }

    /** The fake envd while RUNNING or FROZEN (like {@link #guest()}); empty before start and once stopped. */
    @Override
    public Optional<EnvdApi> envd() {
        Status now = status.get();
        return guestConnected && (now == Status.RUNNING || now == Status.FROZEN) ? Optional.of(envd) : Optional.empty();
    }

    @Override
    public Resources resources() {
        return resources;
    }

    @Override
    public void close() throws BackendException {
        factory.enter(MockOp.CLOSE, this);
        status.set(Status.CLOSED);
        envd.disconnect();
        factory.stopped(this);
    }

    /** A scripted Terminal failure leaves the instance unusable, as a real backend's would. */
    void broken() {
        status.updateAndGet(s -> s == Status.CLOSED ? s : Status.BROKEN);
        envd.disconnect();
    }

    /** The process behind it vanished (for example the host rebooted): not running, nothing to release. */
    void vanish() {
        status.set(Status.CLOSED);
        envd.disconnect();
    }

    private void expect(Status wanted, String operation) throws BackendException {
        Status now = status.get();
        if (now != wanted) {
            throw new BackendException.Terminal("cannot " + operation + " a mock sandbox in status " + now);
        }
    }

    /**
     * The fake envd's journal into the artifact dir, as the container backend keeps envd's journal file; a journal
     * that cannot be read (a test made the fake's logs call fail) is not kept, like a missing journal file.
     */
    private void keepGuestLogs(Path artifactDir) throws BackendException {
        List<EnvdLogEntry> entries = new ArrayList<>();
        try {
            long cursor = 0;
            while (true) {
                EnvdLogPage page = envd.logs(cursor, 1000);
                entries.addAll(page.entries());
                if (page.entries().isEmpty() || page.nextCursor() <= cursor) {
                    break;
                }
                cursor = page.nextCursor();
            }
        } catch (EnvdException e) {
            return;
        }
        try {
            MockPausedState.keepGuestLogs(artifactDir, entries);
        } catch (IOException e) {
            throw new BackendException.Recoverable("cannot write mock guest logs", e);
        }
    }

    private static void writeArtifact(Path artifactDir, byte[] content) throws BackendException {
        try {
            Files.createDirectories(artifactDir);
            Files.write(artifactDir.resolve(ARTIFACT_FILE), content);
        } catch (IOException e) {
            throw new BackendException.Recoverable("cannot write mock artifacts", e);
        }
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
