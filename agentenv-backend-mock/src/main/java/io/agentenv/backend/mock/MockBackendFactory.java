package io.agentenv.backend.mock;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendCapacity;
import io.agentenv.spi.BackendContext;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.HostNetwork;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.Reservation;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateDescriptor;
import io.agentenv.spi.TemplateId;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A scriptable in-memory backend for tests (ServiceLoader name {@code mock}). It runs nothing: instances only track a
 * status. Per operation, a test can queue outcomes (succeed, fail recoverable/terminal, delay, hold at a {@link Gate}),
 * read call counters, and forbid locks that must not be held while the backend is called (as OkHttp's
 * {@code RecordingEventListener.forbidLock}).
 */
public final class MockBackendFactory implements SandboxBackendFactory {
    public static final String NAME = "mock";
    public static final Resources BASE_RESOURCES = new Resources(2, 512, 1024);

    private final Map<MockOp, Deque<MockAction>> scripts = new EnumMap<>(MockOp.class);
    private final Map<MockOp, AtomicInteger> calls = new EnumMap<>(MockOp.class);
    private final List<Object> forbiddenLocks = new CopyOnWriteArrayList<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<MockSandbox> instances = new CopyOnWriteArrayList<>();
    private volatile Consumer<MockSandbox> onPrepare = sandbox -> {};
    private final Map<SandboxId, MockSandbox> live = new ConcurrentHashMap<>();
    private final Map<TemplateId, TemplateDescriptor> templates = new ConcurrentHashMap<>();
    private final Map<TemplateId, AddedImage> imageTemplates = new ConcurrentHashMap<>();
    private volatile Optional<GuestEndpoint> guestEndpoint = Optional.empty();
    private final AtomicInteger networkSlots = new AtomicInteger();
    /** Ids of ready instances per template ({@link #keepReady}), handed out by {@link #reserve}. */
    private final Map<TemplateId, Deque<SandboxId>> ready = new ConcurrentHashMap<>();
    /** Reserved ids not yet taken by prepare, with their template. */
    private final Map<SandboxId, TemplateId> reserved = new ConcurrentHashMap<>();
    /** Reserved ids prepare took, in order. */
    private final List<SandboxId> taken = new CopyOnWriteArrayList<>();

    private final List<TemplateId> deletedSnapshots = new CopyOnWriteArrayList<>();
    private final Map<TemplateId, EnvdInit> snapshotDefaults = new ConcurrentHashMap<>();

    private final SecureRandom random = new SecureRandom();

    /** The ServiceLoader constructor: knows the built-in template {@code base}. */
    public MockBackendFactory() {
        for (MockOp op : MockOp.values()) {
            scripts.put(op, new ConcurrentLinkedDeque<>());
            calls.put(op, new AtomicInteger());
        }
        addTemplate(new TemplateDescriptor(new TemplateId("base"), BASE_RESOURCES));
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<TemplateDescriptor> templates() {
        return List.copyOf(templates.values());
    }

    @Override
    public Optional<TemplateDescriptor> template(TemplateId id) {
        return Optional.ofNullable(templates.get(id))
                .or(() -> imageTemplates.containsKey(id)
                        ? Optional.of(new TemplateDescriptor(id, BASE_RESOURCES))
                        : Optional.empty());
    }

    public void addTemplate(TemplateDescriptor template) {
        templates.put(template.id(), template);
    }

    /** Adds the image as a template with the base's resources; the rootfs must be a directory. */
    @Override
    public TemplateDescriptor addImageTemplate(TemplateId id, Path rootfs, String preparation) throws BackendException {
        if (!Files.isDirectory(rootfs)) {
            throw new BackendException.Terminal("not a directory: " + rootfs);
        }
        imageTemplates.put(id, new AddedImage(rootfs, preparation));
        return new TemplateDescriptor(id, BASE_RESOURCES);
    }

    /** An image {@link #addImageTemplate} added: its rootfs and the preparation its boot would run. */
    public record AddedImage(Path rootfs, String preparation) {}

    /** The image each template of {@link #addImageTemplate} was added with. */
    public Map<TemplateId, AddedImage> imageTemplates() {
        return Map.copyOf(imageTemplates);
    }

    @Override
    public SandboxBackend prepare(LaunchSpec spec, LaunchSource source) throws BackendException {
        requireNonNull(spec, "spec is null");
        requireNonNull(source, "source is null");
        enter(MockOp.PREPARE, null);
        if (source instanceof LaunchSource.Template || source instanceof LaunchSource.Snapshot) {
            TemplateId template = spec.template(); // a snapshot's launch names the snapshot
            if (taken.contains(spec.id())) {
                violations.add("the reserved instance of " + spec.id() + " was taken twice");
            }
            if (reserved.remove(spec.id(), template)) {
                taken.add(spec.id());
            }
        }
        Resources resources = switch (source) {
            case LaunchSource.Template t -> {
                TemplateDescriptor template = template(t.template())
                        .orElseThrow(
                                () -> new BackendException.Terminal("mock backend has no template " + t.template()));
                yield template.resources();
            }
            case LaunchSource.Snapshot s -> s.state().resources();
            case LaunchSource.Paused p -> p.state().resources();
        };
        MockSandbox sandbox = new MockSandbox(this, spec, source, resources, nextHostNetwork());
        onPrepare.accept(sandbox);
        instances.add(sandbox);
        MockSandbox previous = live.put(spec.id(), sandbox);
        if (previous != null
                && previous.status() != MockSandbox.Status.CLOSED
                && previous.status() != MockSandbox.Status.STOPPED) {
            violations.add("two live instances for sandbox " + spec.id());
        }
        return sandbox;
    }

    @Override
    public PausedState decodePausedState(byte[] encoded, Path artifactDir) throws BackendException {
        enter(MockOp.DECODE_PAUSED, null);
        requireArtifacts(artifactDir);
        return MockPausedState.decode(encoded, artifactDir);
    }

    @Override
    public SnapshotState decodeSnapshotState(byte[] encoded, Path artifactDir) throws BackendException {
        enter(MockOp.DECODE_SNAPSHOT, null);
        requireArtifacts(artifactDir);
        return MockSnapshotState.decode(encoded);
    }

    @Override
    public void discardPaused(SandboxId id) throws BackendException {
        enter(MockOp.DISCARD_PAUSED, null);
    }

    /** A RUNNING instance of this factory survives a server restart; call {@link #loseAllInstances()} to simulate a host reboot. */
    @Override
    public Optional<SandboxBackend> reattach(LaunchSpec spec) throws BackendException {
        enter(MockOp.REATTACH, null);
        MockSandbox sandbox = live.get(spec.id());
        if (sandbox == null || sandbox.status() != MockSandbox.Status.RUNNING) {
            return Optional.empty();
        }
        return Optional.of(sandbox);
    }

    /** Closes every live instance whose sandbox is not in {@code running}, as a real backend reaps leftovers. */
    @Override
    public void reapUnclaimed(Set<SandboxId> running) throws BackendException {
        enter(MockOp.REAP, null);
        for (MockSandbox sandbox : List.copyOf(live.values())) {
            if (!running.contains(sandbox.spec().id())) {
                sandbox.vanish();
                live.remove(sandbox.spec().id(), sandbox);
            }
        }
    }

    /**
     * Proposes the id of one of the ready instances {@link #keepReady} made for {@code template}, if any is left: a
     * create launches a sandbox of that id; prepare takes it; a reservation closed before that puts it back.
     */
    @Override
    public Optional<Reservation> reserve(TemplateId template) {
        requireNonNull(template, "template is null");
        Deque<SandboxId> ids = ready.get(template);
        SandboxId id = ids == null ? null : ids.pollFirst();
        if (id == null) {
            return Optional.empty();
        }
        reserved.put(id, template);
        return Optional.of(new Reservation() {
            @Override
            public SandboxId id() {
                return id;
            }

            @Override
            public void close() {
                if (reserved.remove(id, template)) {
                    ready.get(template).addFirst(id);
                }
            }
        });
    }

    /** A ready id of the snapshot {@code id}, as {@link #keepReady} of its id made them ({@link #reserve(TemplateId)}). */
    @Override
    public Optional<Reservation> reserve(
            TemplateId id,
            SnapshotState state,
            Map<String, String> envVars,
            String defaultUser,
            Optional<String> defaultWorkdir) {
        requireNonNull(state, "state is null");
        snapshotDefaults.put(
                id, new EnvdInit(Optional.empty(), envVars, Optional.of(defaultUser), defaultWorkdir, Instant.EPOCH));
        return reserve(id);
    }

    /** What each snapshot's latest reserve said its sandboxes get (env vars, user, workdir; no token, no time). */
    public Map<TemplateId, EnvdInit> snapshotDefaults() {
        return Map.copyOf(snapshotDefaults);
    }

    /** The snapshots the catalog said it deleted, in order. */
    public List<TemplateId> deletedSnapshots() {
        return List.copyOf(deletedSnapshots);
    }

    @Override
    public void snapshotDeleted(TemplateId id) {
        deletedSnapshots.add(id);
        ready.remove(id);
    }

    /**
     * Open instances and ready ids take a slot each; there is no limit; the warm pool is what {@link #keepReady} made
     * and no create reserved yet (its target is what it holds: the mock does not refill).
     */
    @Override
    public Optional<BackendCapacity> capacity() {
        List<BackendCapacity.PoolStock> stock = new ArrayList<>();
        int readyTotal = 0;
        for (Map.Entry<TemplateId, Deque<SandboxId>> e : ready.entrySet()) {
            int n = e.getValue().size();
            readyTotal += n;
            stock.add(new BackendCapacity.PoolStock(e.getKey(), n, n));
        }
        return Optional.of(new BackendCapacity(openInstances().size() + readyTotal, OptionalInt.empty(), stock));
    }

    // ---- scripting ---------------------------------------------------------------------------------------------

    /** Queues outcomes for the next calls of {@code op}, in order. */
    public void script(MockOp op, MockAction... actions) {
        for (MockAction action : actions) {
            scripts.get(op).addLast(requireNonNull(action, "action is null"));
        }
    }

    public void failNext(MockOp op, BackendException error) {
        script(op, new MockAction.Fail(error));
    }

    /** The next call of {@code op} blocks at the returned gate, then succeeds. */
    public Gate holdNext(MockOp op) {
        return holdNext(op, new MockAction.Succeed());
    }

    /** The next call of {@code op} blocks at the returned gate, then does {@code then}. */
    public Gate holdNext(MockOp op, MockAction then) {
        Gate gate = new Gate();
        script(op, new MockAction.Hold(gate, then));
        return gate;
    }

    public int count(MockOp op) {
        return calls.get(op).get();
    }

    /** Every later backend call records a violation (and fails) when the calling thread holds {@code lock}. */
    public void forbidLock(Object lock) {
        forbiddenLocks.add(requireNonNull(lock, "lock is null"));
    }

    /** Contract violations seen so far: backend calls under a forbidden lock, two live instances for one sandbox. */
    public List<String> violations() {
        return List.copyOf(violations);
    }

    /** Makes {@code count} more ready instances of {@code template}, each with a random sandbox id of its own. */
    public void keepReady(TemplateId template, int count) {
        Deque<SandboxId> ids = ready.computeIfAbsent(template, t -> new ConcurrentLinkedDeque<>());
        for (int i = 0; i < count; i++) {
            ids.addLast(SandboxId.random(random));
        }
    }

    /** {@code action} gets every instance this backend prepares from now on, before anything else sees it. */
    public void onPrepare(Consumer<MockSandbox> action) {
        onPrepare = requireNonNull(action, "action is null");
    }

    public void guestEndpoint(GuestEndpoint endpoint) {
        this.guestEndpoint = Optional.of(endpoint);
    }

    /**
     * Settings (for end-to-end runs of the server jar, e.g. the proxy's SDK suite against one local envd):
     * {@code guest_endpoint} = {@code host:port} makes every running instance report that guest endpoint, with the
     * unix socket {@code guest_unix_socket} when also given.
     */
    @Override
    public void initialize(BackendContext context) throws BackendException {
        Optional<String> address = context.setting("guest_endpoint");
        Optional<Path> socket = context.setting("guest_unix_socket").map(Path::of);
        if (address.isEmpty()) {
            if (socket.isPresent()) {
                throw new BackendException.Terminal("mock setting guest_unix_socket needs guest_endpoint (host:port)");
            }
            return;
        }
        String value = address.get();
        int colon = value.lastIndexOf(':');
        try {
            if (colon <= 0) {
                throw new IllegalArgumentException("no host");
            }
            guestEndpoint(
                    new GuestEndpoint(value.substring(0, colon), Integer.parseInt(value.substring(colon + 1)), socket));
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            throw new BackendException.Terminal("mock setting guest_endpoint must be host:port: " + value);
        }
    }

    Optional<GuestEndpoint> guestEndpoint() {
        return guestEndpoint;
    }

    // ---- observation -------------------------------------------------------------------------------------------

    /** Every instance ever prepared, oldest first. */
    public List<MockSandbox> instances() {
        return List.copyOf(instances);
    }

    /** The newest instance prepared for {@code id}. */
    public Optional<MockSandbox> instance(SandboxId id) {
        List<MockSandbox> all = new ArrayList<>(instances);
        for (int i = all.size() - 1; i >= 0; i--) {
            if (all.get(i).spec().id().equals(id)) {
                return Optional.of(all.get(i));
            }
        }
        return Optional.empty();
    }

    /** Instances holding resources: prepared, running, frozen, broken or dead, and not yet closed. */
    public List<MockSandbox> openInstances() {
        return instances.stream()
                .filter(s -> switch (s.status()) {
                    case PREPARED, RUNNING, FROZEN, BROKEN, DEAD -> true;
                    case STOPPED, CLOSED -> false;
                })
                .toList();
    }

    /** The ids of the ready instances of {@code template} no create reserved, in the order they are proposed. */
    public List<SandboxId> readyIds(TemplateId template) {
        Deque<SandboxId> ids = ready.get(template);
        return ids == null ? List.of() : List.copyOf(ids);
    }

    /** Reserved ids that prepare has not taken and no one gave back (a create in progress, or a leak). */
    public Set<SandboxId> outstandingReservations() {
        return Set.copyOf(reserved.keySet());
    }

    /** Reserved ids prepare took, oldest first. */
    public List<SandboxId> takenReservations() {
        return List.copyOf(taken);
    }

    /** Simulates a host reboot: every instance is gone without a close call. */
    public void loseAllInstances() {
        Collection<MockSandbox> all = new ArrayList<>(instances);
        all.forEach(MockSandbox::vanish);
        live.clear();
    }

    // ---- internals ---------------------------------------------------------------------------------------------

    /** A fake network per prepared instance: {@code /var/run/netns/aenv-mock-<n>} and {@code 10.222.x.y}. */
    private HostNetwork nextHostNetwork() {
        int slot = networkSlots.incrementAndGet();
        byte[] ip = {10, (byte) 222, (byte) ((slot >> 8) & 0xff), (byte) (slot & 0xff)};
        try {
            return new HostNetwork(Path.of("/var/run/netns/aenv-mock-" + slot), InetAddress.getByAddress(ip));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("a 4-byte address is always valid", e);
        }
    }

    void stopped(MockSandbox sandbox) {
        live.remove(sandbox.spec().id(), sandbox);
    }

    /** First line of every backend call: check locks, count, then run the scripted action. */
    void enter(MockOp op, MockSandbox target) throws BackendException {
        for (Object lock : forbiddenLocks) {
            if (Thread.holdsLock(lock)) {
                String violation = op + " called while holding a forbidden lock";
                violations.add(violation);
                throw new IllegalStateException(violation);
            }
        }
        calls.get(op).incrementAndGet();
        MockAction action = scripts.get(op).pollFirst();
        run(action == null ? new MockAction.Succeed() : action, target);
    }

    private static void run(MockAction action, MockSandbox target) throws BackendException {
        switch (action) {
            case MockAction.Succeed s -> {}
            case MockAction.Fail f -> {
                if (f.error() instanceof BackendException.Terminal && target != null) {
                    target.broken();
                }
                throw f.error();
            }
            case MockAction.Delay d -> pause(d.delay());
            case MockAction.Hold h -> {
                h.gate().block();
                run(h.then(), target);
            }
        }
    }

    private static void pause(Duration delay) throws BackendException {
        try {
            Thread.sleep(delay);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Recoverable("interrupted during a scripted delay", e);
        }
    }

    private static void requireArtifacts(Path artifactDir) throws BackendException {
        if (!Files.isRegularFile(artifactDir.resolve(MockSandbox.ARTIFACT_FILE))) {
            throw new BackendException.Terminal("mock artifacts missing under " + artifactDir);
        }
    }
}
