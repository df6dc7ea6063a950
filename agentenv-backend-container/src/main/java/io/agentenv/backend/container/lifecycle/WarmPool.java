package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.GuestProcFiles;
import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.UtsHostname;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.backend.container.pool.PoolDemand;
import io.agentenv.backend.container.pool.RecentKeys;
import io.agentenv.backend.container.pool.RefillPacing;
import io.agentenv.backend.container.pool.RefillingPool;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.LayerFiles;
import io.agentenv.backend.container.storage.SandboxDirs;
import io.agentenv.backend.container.storage.SandboxRootfs;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdTokens;
import io.agentenv.spi.Reservation;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ready sandboxes per template, so that a create is mostly a claim: each member is the template's boot image already
 * restored into its own overlay (on its own disk of the backend's size), network slot and cgroup, with envd answering
 * on an open client connection. Each member is made for a sandbox id of its own: its container is named after it
 * ({@link ContainerNames#containerId}), its hostname is that id and its {@code instance.json} is written; with the server's
 * token derivation its envd is initialised with that id's token, the default user {@value #MEMBER_USER} and its
 * workdir. A create that {@link #reserve reserves} a member launches a sandbox of the member's id, and its claim needs
 * no {@code /init} (unless it asks for env vars or another user), no hostname and no file; a claim of a member under
 * another id ({@link #take}) records the claim, sets its hostname and sends the full {@code /init} (its egress rules
 * are set at every claim). A member is handed out at most once (taken from the ready members under the pool's lock; a
 * reservation given back unused returns it); one background thread refills ({@link RefillingPool}), one member at a
 * time (restores compete for the same 2 CPUs as the creates they speed up), paced by {@link RefillPacing}: a little
 * after a single take, after a burst of takes once it is over (bounded by {@link #MAX_DEFERRAL}). Members are closed at {@link #close()};
 * a crashed server's members are reaped at the next start like any unclaimed container (no record names their ids).
 */
public final class WarmPool implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WarmPool.class);
    private static final Duration READY = Duration.ofSeconds(60);
    /** Takes closer together than this are a burst (20 concurrent creates arrive within a few ms to tens of ms). */
    private static final Duration BURST_GAP = Duration.ofMillis(100);
    /** A burst is over when no take happened for this long (its claims answered and first commands run: ~400 ms). */
    private static final Duration BURST_QUIET = Duration.ofMillis(500);
    /** The longest a refill waits for a burst to end (a steady stream of concurrent creates must not keep it empty). */
    private static final Duration MAX_DEFERRAL = Duration.ofSeconds(2);
    /** Creates of one template within this long count as one burst of demand. */
    static final Duration DEMAND_WINDOW = Duration.ofSeconds(1);
    /** How long a burst keeps its template's pool grown to its size. */
    static final Duration DEMAND_MEMORY = Duration.ofMinutes(10);
    /** How often members beyond a template's current target (its demand has passed) are destroyed. */
    static final Duration TRIM_INTERVAL = Duration.ofSeconds(30);

    /** Snapshots kept warm at most (besides the templates): each holds {@code size} sandboxes' slots and memory. */
    static final int MAX_SNAPSHOTS = 2;
    /**
     * A snapshot not created from for this long gives its place to another one that is: the most recently used ones
     * stay warm, and a few more than fit, used in turn, do not evict each other at every create.
     */
    static final Duration SNAPSHOT_IDLE_BEFORE_EVICTION = Duration.ofSeconds(30);

    /** The default user a member's envd is initialised with (the orchestrator's, E2B's base template's). */
    static final String MEMBER_USER = "user";

    /**
     * What a member's envd is initialised with besides its token: a template's members get nothing beyond E2B's
     * default user (and its home); a snapshot's, the environment, user and working directory its sandboxes get when
     * the create asks for nothing more, so that such a claim needs no {@code /init}.
     */
    public record MemberDefaults(Map<String, String> envVars, String user, Optional<String> workdir) {
        public MemberDefaults {
            envVars = Map.copyOf(envVars);
            requireNonNull(user, "user is null");
            requireNonNull(workdir, "workdir is null");
        }

        /** Sandboxes' defaults as a launch gives them: without a workdir, the user's home (as the claim's init sets). */
        public static MemberDefaults of(Map<String, String> envVars, String user, Optional<String> workdir) {
            return new MemberDefaults(envVars, user, workdir.or(() -> GenerationStart.workdir(user)));
        }

        /** A template's members: {@value WarmPool#MEMBER_USER} in its home. */
        static final MemberDefaults TEMPLATE =
                new MemberDefaults(Map.of(), MEMBER_USER, GenerationStart.workdir(MEMBER_USER));
    }

    /**
     * One ready sandbox, not yet anyone's.
     *
     * @param sandbox the sandbox id it was made for: its container is {@link ContainerNames#containerId} of it and its
     *                hostname is this id
     * @param token the token its envd was initialised with ({@code sandbox}'s), with default user {@link #MEMBER_USER};
     *              empty when the pool has no token derivation: then its envd had one {@code /init} that set nothing
     *              (so its init path has run once; envd does not journal it)
     * @param envd a client of the member's envd, which answers {@code /ready}; its connection is kept for the claimer
     * @param processes its init and envd processes, found once it was ready (empty if they could not be read then):
     *                  the claim's liveness starts from them instead of reading {@code /proc} inside the create
     * @param defaults what its envd was initialised with besides the token (when there is a token)
     */
    public record Member(
            SandboxId sandbox,
            Optional<AccessToken> token,
            ContainerId id,
            SandboxDirs dirs,
            NetSlot slot,
            Lineage lineage,
            EnvdClient envd,
            Optional<GenerationLiveness.Processes> processes,
            MemberDefaults defaults) {
        public Member {
            requireNonNull(sandbox, "sandbox is null");
            requireNonNull(token, "token is null");
            requireNonNull(id, "id is null");
            requireNonNull(dirs, "dirs is null");
            requireNonNull(slot, "slot is null");
            requireNonNull(lineage, "lineage is null");
            requireNonNull(envd, "envd is null");
            requireNonNull(processes, "processes is null");
            requireNonNull(defaults, "defaults is null");
        }
    }

    private final Resources resources;
    private final ContainerNames names;
    private final SandboxSpecs specs;
    private final RuncRuntime runc;
    private final CgroupTree cgroups;
    private final NetnsPool pool;
    private final SandboxRootfs sandboxRootfs;
    private final EnvdClients envdClients;
    private final UtsHostname hostnames;
    private final TemplateImages templates;
    private final LayerFiles layerFiles;
    private final Clock clock;
    private final int size;
    /** Whether recent demand grows the pool past {@link #size} (and the trimmer shrinks it back). */
    private final boolean demandSized;
    /** Destroys what demand no longer asks for; started by the first {@link #keepWarm}. Guarded by lock. */
    private Thread trimmer;
    /** Counted down by {@link #close}: the trimmer stops (after a trim in progress, which is never cut short). */
    private final CountDownLatch closing = new CountDownLatch(1);

    private final Optional<EnvdTokens> tokens;
    private final SecureRandom random = new SecureRandom();
    /** Ready members per template, in the order templates were first asked for. */
    private final RefillingPool<String, Member> ready;
    /** The snapshots kept warm, by their id (a key of {@link #ready}, like a template's name). */
    private final Map<String, WarmSnapshot> snapshots = new ConcurrentHashMap<>();
    /** Which snapshots may be kept warm, by recent use. */
    private final RecentKeys<String> recentSnapshots = new RecentKeys<>(MAX_SNAPSHOTS, SNAPSHOT_IDLE_BEFORE_EVICTION);

    private record WarmSnapshot(SavedStates.Snapshot state, MemberDefaults defaults) {}

    private final Object lock = new Object();
    /** Reserved members no prepare claimed yet, by their sandbox id, with their template. Guarded by lock. */
    private final Map<SandboxId, Reserved> reserved = new HashMap<>();
    /** Set under lock. */
    private volatile boolean closed;

    private record Reserved(String template, Member member) {}

    /**
     * @param tokens the server's envd token of a sandbox id: members are initialised with their id's token and can be
     *               {@link #reserve reserved}; without it a member's envd gets its token at its claim
     */
    public WarmPool(
            Resources resources,
            ContainerNames names,
            SandboxSpecs specs,
            RuncRuntime runc,
            CgroupTree cgroups,
            NetnsPool pool,
            SandboxRootfs sandboxRootfs,
            EnvdClients envdClients,
            UtsHostname hostnames,
            TemplateImages templates,
            LayerFiles layerFiles,
            Clock clock,
            int size,
            int max,
            Optional<EnvdTokens> tokens) {
        this.resources = requireNonNull(resources, "resources is null");
        this.names = requireNonNull(names, "names is null");
        this.specs = requireNonNull(specs, "specs is null");
        this.runc = requireNonNull(runc, "runc is null");
        this.cgroups = requireNonNull(cgroups, "cgroups is null");
        this.pool = requireNonNull(pool, "pool is null");
        this.sandboxRootfs = requireNonNull(sandboxRootfs, "sandboxRootfs is null");
        this.envdClients = requireNonNull(envdClients, "envdClients is null");
        this.hostnames = requireNonNull(hostnames, "hostnames is null");
        this.templates = requireNonNull(templates, "templates is null");
        this.layerFiles = requireNonNull(layerFiles, "layerFiles is null");
        this.clock = requireNonNull(clock, "clock is null");
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0: " + size);
        }
        this.size = size;
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.ready = new RefillingPool<>(
                "warm-pool-refill",
                size,
                new RefillingPool.Items<>() {
                    @Override
                    public Optional<Member> make(String template) throws InterruptedException {
                        return restoreForPool(template);
                    }

                    @Override
                    public void discard(Member member) throws InterruptedException {
                        destroy(member);
                    }
                },
                Optional.of(new RefillPacing(BURST_GAP, BURST_QUIET)),
                MAX_DEFERRAL,
                WarmPool::logPacingWait,
                max > size ? Optional.of(new PoolDemand<>(DEMAND_WINDOW, DEMAND_MEMORY, size, max)) : Optional.empty());
        this.demandSized = size > 0 && max > size;
    }

    /** Starts the trimming of grown templates once (when demand can grow the pool at all); under lock. */
    private void startTrimmer() {
        if (trimmer == null && demandSized && !closed) {
            trimmer = Thread.ofVirtual().name("warm-pool-trim").start(this::trimWhileOpen);
        }
    }

    /** Every {@link #TRIM_INTERVAL}, destroys the members a template holds beyond what its demand asks for now. */
    private void trimWhileOpen() {
        try {
            while (!closing.await(TRIM_INTERVAL.toMillis(), TimeUnit.MILLISECONDS)) {
                int trimmed = ready.trim();
                if (trimmed > 0) {
                    log.atInfo()
                            .addKeyValue("members", trimmed)
                            .log("warm pool shrunk: the demand that grew it has passed");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Starts keeping {@code template} warm (idempotent); the refill runs in the background. */
    public void keepWarm(String template) {
        if (size == 0 || closed) {
            return;
        }
        synchronized (lock) {
            startTrimmer();
        }
        ready.keep(template);
    }

    /**
     * Starts keeping the snapshot {@code id} warm (a template build's result, say) and counts a use of it; true when
     * it is kept. At most {@value #MAX_SNAPSHOTS} are: a snapshot not kept takes the place of the least recently used
     * one once that has not been created from for {@link #SNAPSHOT_IDLE_BEFORE_EVICTION} (whose ready members are then
     * destroyed in the background). Its members are restores of the snapshot like a create from it makes, on the
     * snapshot's resources, initialised with {@code defaults} (those of the first create that asked: what its sandboxes
     * get from the snapshot). Does not block.
     */
    public boolean keepWarm(String id, SavedStates.Snapshot snapshot, MemberDefaults defaults) {
        if (size == 0 || closed || tokens.isEmpty()) { // a member is initialised for its id: it needs its token
            return false;
        }
        RecentKeys.Use<String> use = recentSnapshots.use(id, clock.instant());
        use.evicted().ifPresent(this::evictSnapshot);
        if (!use.held()) {
            return false;
        }
        WarmSnapshot warm = new WarmSnapshot(snapshot, defaults);
        if (snapshots.putIfAbsent(id, warm) == null && !ready.keep(id)) {
            snapshots.remove(id, warm);
            recentSnapshots.forget(id);
            return false;
        }
        return true;
    }

    /** Stops keeping a snapshot warm that others took the place of; its ready members go in the background. */
    private void evictSnapshot(String id) {
        snapshots.remove(id);
        List<Member> members = ready.drop(id);
        log.atInfo()
                .addKeyValue("snapshot", id)
                .addKeyValue("members", members.size())
                .log("a snapshot not created from lately is no longer kept warm");
        if (!members.isEmpty()) {
            Thread.ofVirtual().name("warm-pool-evict").start(() -> members.forEach(this::destroyQuietly));
        }
    }

    /**
     * Destroys one ready member, a snapshot's before a template's, so that its slot goes to a sandbox being created;
     * false when there is none. The refill makes it again once a slot is free.
     */
    public boolean yieldOne() throws InterruptedException {
        List<String> keys = new ArrayList<>(ready.keys());
        keys.sort((a, b) -> Boolean.compare(!snapshots.containsKey(a), !snapshots.containsKey(b)));
        for (String key : keys) {
            Optional<Member> member = ready.poll(key);
            if (member.isPresent()) {
                log.atInfo()
                        .addKeyValue("template", key)
                        .addKeyValue("sandbox_id", member.get().sandbox().value())
                        .log("a warm sandbox gives its slot to a create");
                destroy(member.get());
                return true;
            }
        }
        return false;
    }

    /** Whether the snapshot {@code id} is kept warm. */
    public boolean keepsSnapshot(String id) {
        return snapshots.containsKey(id);
    }

    /** Stops keeping the snapshot {@code id} warm and destroys its ready members (it was deleted). */
    public void forgetSnapshot(String id) throws InterruptedException {
        recentSnapshots.forget(id);
        if (snapshots.remove(id) == null) {
            return;
        }
        for (Member member : ready.drop(id)) {
            destroy(member);
        }
    }

    /** A ready member of {@code template}, never handed out before; empty when none is ready (the caller restores). */
    public Optional<Member> take(String template) {
        if (size == 0 || closed) {
            return Optional.empty();
        }
        return ready.take(template);
    }

    /**
     * Sets a ready member of {@code template} aside for the create of a sandbox of the member's id; empty when none is
     * ready or members are not initialised for their ids (no token derivation). {@link #claim} hands it to that
     * sandbox; closing the reservation before then puts it back first in line.
     */
    public Optional<Reservation> reserve(String template) {
        if (size == 0 || closed || tokens.isEmpty()) {
            return Optional.empty();
        }
        Optional<Member> member = ready.takeReady(template); // a miss is counted by prepare's take of this create
        if (member.isEmpty()) {
            return Optional.empty();
        }
        boolean keep;
        synchronized (lock) { // close() sets closed under lock before it collects the reserved members
            keep = !closed;
            if (keep) {
                reserved.put(member.get().sandbox(), new Reserved(template, member.get()));
            }
        }
        if (!keep) {
            destroyQuietly(member.get());
            return Optional.empty();
        }
        Member held = member.get();
        return Optional.of(new Reservation() {
            @Override
            public SandboxId id() {
                return held.sandbox();
            }

            @Override
            public void close() {
                giveBack(held);
            }
        });
    }

    /** The member reserved for {@code sandbox} of {@code template}, now the caller's; empty when there is none. */
    public Optional<Member> claim(SandboxId sandbox, String template) {
        synchronized (lock) {
            Reserved held = reserved.get(sandbox);
            if (held == null || !held.template().equals(template)) {
                return Optional.empty();
            }
            reserved.remove(sandbox);
            return Optional.of(held.member());
        }
    }

    /** A reservation closed: its member goes back first in line unless it was claimed (or the pool closed). */
    @SuppressWarnings("ReferenceEquality") // the very member this reservation holds, not an equal one
    private void giveBack(Member member) {
        Reserved held;
        synchronized (lock) {
            held = reserved.get(member.sandbox());
            if (held == null || held.member() != member) {
                return; // claimed, or destroyed by close()
            }
            reserved.remove(member.sandbox());
        }
        if (!ready.giveBack(held.template(), member)) { // closed meanwhile
            destroyQuietly(member);
        }
    }

    private void destroyQuietly(Member member) {
        try {
            destroy(member);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The templates kept warm, sorted, each with how many of its members are ready now. */
    public Map<String, Integer> stock() {
        Map<String, Integer> stock = new TreeMap<>();
        for (String template : ready.keys()) {
            stock.put(template, ready.ready(template));
        }
        return stock;
    }

    /** How many ready members the pool keeps per template without demand. */
    public int size() {
        return size;
    }

    /** How many members {@code template} is refilled to now: {@link #size}, or more while its recent demand asks. */
    public int target(String template) {
        return ready.target(template);
    }

    public int readyCount(String template) {
        return ready.ready(template);
    }

    /** A new member for the pool, or empty (logged) when none can be made now: the next take tries again. */
    private Optional<Member> restoreForPool(String template) throws InterruptedException {
        try {
            return Optional.of(restore(template));
        } catch (BackendException.Exhausted e) {
            log.atInfo()
                    .addKeyValue("template", template)
                    .addKeyValue("limit", e.limit())
                    .log("warm pool not refilled: no free sandbox slot");
            return Optional.empty();
        } catch (BackendException e) {
            log.atWarn()
                    .addKeyValue("template", template)
                    .setCause(e)
                    .log("warm pool refill failed; creates restore on demand");
            return Optional.empty();
        }
    }

    private static void logPacingWait(Duration waited) {
        if (waited.toMillis() > 2 * BURST_GAP.toMillis()) { // a burst (a single take waits BURST_GAP)
            log.atInfo()
                    .addKeyValue("waited_ms", waited.toMillis())
                    .log("warm pool refill waited for a burst of creates to end");
        }
    }

    /**
     * Restores the template's boot image into a new member for a new sandbox id, waits until its envd answers and
     * initialises it (see {@link Member#token}); sets its hostname and writes its {@code instance.json}.
     */
    private Member restore(String key) throws BackendException, InterruptedException {
        WarmSnapshot snapshot = snapshots.get(key);
        return snapshot == null
                ? restore(key, templates.image(key))
                : restore(key, snapshot.state(), snapshot.defaults());
    }

    private Member restore(String template, TemplateImages.Image image) throws BackendException, InterruptedException {
        SandboxId sandbox = SandboxId.random(random);
        ContainerId id = names.containerId(sandbox);
        SandboxDirs dirs = names.dirs(id);
        NetSlot slot = null;
        EnvdClient client = null;
        try {
            try {
                slot = pool.acquire();
            } catch (NetnsPool.NoFreeSlotException e) {
                throw e.exhausted();
            }
            sandboxRootfs.mountOnNewDisk(image.lineage().lowers(dirs.layers()), dirs, resources.diskSizeMiB());
            specs.makeEnvdDir(dirs);
            GuestProcFiles.writeBootId(dirs, GuestProcFiles.newBootId()); // a new sandbox: a boot of its own
            RuncRuntime.writeConfig(
                    dirs.bundle(), specs.build(id, dirs, slot, sandbox.value(), image.lineage(), resources, List.of()));
            runc.restore(id, dirs.bundle(), image.images(), dirs.restoreWork());
            client = envdClients.open(sandbox, ContainerSandbox.envdAddress(slot), Optional.empty());
            client.waitUntilReady(clock.instant().plus(READY));
            Optional<AccessToken> token = tokens.map(t -> t.envdToken(sandbox));
            client.init(memberInit(token, MemberDefaults.TEMPLATE));
            long initPid = Generation.initPid(dirs);
            hostnames.set(initPid, sandbox.value()); // a restore keeps the template boot's hostname
            InstanceFile.write(dirs, image.lineage(), slot.index());
            return new Member(
                    sandbox,
                    token,
                    id,
                    dirs,
                    slot,
                    image.lineage(),
                    client,
                    processes(id, initPid),
                    MemberDefaults.TEMPLATE);
        } catch (IOException | CommandFailedException | EnvdException | RuntimeException e) {
            if (client != null) {
                client.close();
            }
            if (slot != null) {
                release(id, dirs, slot);
            }
            throw new BackendException.Recoverable(
                    "could not restore a warm sandbox of " + template + ": " + e.getMessage(), e);
        }
    }

    /**
     * Restores the snapshot into a new member for a new sandbox id, as a create from it does (its owned layers copied,
     * its checkpoint restored on its resources), waits until its envd answers and initialises it with the member's
     * token (the snapshot's envd still holds its source's, which the init is sent with).
     */
    private Member restore(String id, SavedStates.Snapshot snapshot, MemberDefaults defaults)
            throws BackendException, InterruptedException {
        SandboxId sandbox = SandboxId.random(random);
        ContainerId container = names.containerId(sandbox);
        SandboxDirs dirs = names.dirs(container);
        NetSlot slot = null;
        EnvdClient client = null;
        try {
            Lineage lineage = templates.localize(snapshot.lineage(), snapshot.files());
            SavedStates.requirePresent(lineage, snapshot.layers(), Optional.of(snapshot.images()));
            try {
                slot = pool.acquire();
            } catch (NetnsPool.NoFreeSlotException e) {
                throw e.exhausted();
            }
            layerFiles.copyLayers(
                    snapshot.layers(),
                    dirs.layers(),
                    lineage.owned().stream().map(n -> new String[] {n, n}).toList());
            sandboxRootfs.mountOnNewDisk(
                    lineage.lowers(dirs.layers()), dirs, snapshot.resources().diskSizeMiB());
            specs.makeEnvdDir(dirs);
            GuestProcFiles.writeBootId(dirs, snapshot.bootId().orElseGet(GuestProcFiles::newBootId));
            RuncRuntime.writeConfig(
                    dirs.bundle(),
                    specs.build(container, dirs, slot, sandbox.value(), lineage, snapshot.resources(), List.of()));
            runc.restore(container, dirs.bundle(), snapshot.images(), dirs.restoreWork());
            client = envdClients.open(sandbox, ContainerSandbox.envdAddress(slot), snapshot.guestToken());
            client.waitUntilReady(clock.instant().plus(READY));
            Optional<AccessToken> token = tokens.map(t -> t.envdToken(sandbox));
            client.init(memberInit(token, defaults));
            client.close();
            client = envdClients.open(sandbox, ContainerSandbox.envdAddress(slot), token);
            long initPid = Generation.initPid(dirs);
            hostnames.set(initPid, sandbox.value());
            InstanceFile.write(dirs, lineage, slot.index());
            return new Member(
                    sandbox, token, container, dirs, slot, lineage, client, processes(container, initPid), defaults);
        } catch (IOException | CommandFailedException | EnvdException | RuntimeException e) {
            if (client != null) {
                client.close();
            }
            if (slot != null) {
                release(container, dirs, slot);
            }
            throw new BackendException.Recoverable(
                    "could not restore a warm sandbox of snapshot " + id + ": " + e.getMessage(), e);
        }
    }

    /**
     * What a member's envd is initialised with: with a token, the token and its {@link MemberDefaults} (logged
     * by envd: the first line of the sandbox's journal); without one, nothing (its init path run once after the
     * restore, so the claim's {@code /init} costs envd ~1.2 ms of CPU instead of ~2.1, measured; logged at DEBUG only).
     */
    private EnvdInit memberInit(Optional<AccessToken> token, MemberDefaults defaults) {
        if (token.isEmpty()) {
            return new EnvdInit(Optional.empty(), Map.of(), Optional.empty(), Optional.empty(), clock.instant());
        }
        return new EnvdInit(
                token, defaults.envVars(), Optional.of(defaults.user()), defaults.workdir(), clock.instant());
    }

    /** The member's init and envd processes now, or empty (logged) when they cannot be read. */
    private static Optional<GenerationLiveness.Processes> processes(ContainerId id, long initPid) {
        try {
            return GenerationLiveness.Processes.find(initPid);
        } catch (IOException | RuntimeException e) {
            log.atDebug()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e)
                    .log("warm sandbox's processes not read; its claim looks them up");
            return Optional.empty();
        }
    }

    /** Stops a member and releases its envd client, container, overlay, disk, cgroup, slot and dir. */
    void destroy(Member member) throws InterruptedException {
        member.envd().close();
        release(member.id(), member.dirs(), member.slot());
    }

    private void release(ContainerId id, SandboxDirs dirs, NetSlot slot) throws InterruptedException {
        try {
            runc.delete(id);
            if (!cgroups.pathsOf(id.value()).isEmpty()) {
                cgroups.reap(id.value());
            }
            sandboxRootfs.unmount(dirs);
            pool.release(slot);
            FileTrees.deleteTree(dirs.dir());
        } catch (IOException | CommandFailedException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("warm sandbox not fully removed");
        }
    }

    /** Stops refilling and destroys every ready member. Idempotent. */
    @Override
    public void close() throws InterruptedException {
        Thread trimming;
        synchronized (lock) {
            closed = true;
            trimming = trimmer;
        }
        closing.countDown();
        if (trimming != null) {
            trimming.join();
        }
        List<Member> members = new ArrayList<>(ready.close(false));
        synchronized (lock) {
            reserved.values().forEach(r -> members.add(r.member())); // a create in progress gets no member any more
            reserved.clear();
        }
        for (Member member : members) {
            destroy(member);
        }
    }
}
