package io.agentenv.backend.container;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.client.HttpEnvdClient;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ready sandboxes per template, so that a create is mostly a claim: each member is the template's boot image already
 * restored into its own overlay (on its own disk of the backend's size), network slot and cgroup, with envd answering
 * on an open client connection but without token, env or user (the claimer's {@code /init} sets them; its hostname and
 * egress rules are set at the claim). A member is handed out at most once ({@link #take} removes it under the pool's
 * lock); one background thread refills, one member at a time (restores compete for the same 2 CPUs as the creates
 * they speed up), paced by {@link RefillPacing}: a little after a single take, after a burst of takes once it is over
 * (bounded by {@link #MAX_DEFERRAL}). Members are closed at
 * {@link #close()}; a crashed server's members are reaped at the next start like any unclaimed container.
 */
final class WarmPool implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WarmPool.class);
    private static final Duration READY = Duration.ofSeconds(60);
    /** Takes closer together than this are a burst (20 concurrent creates arrive within a few ms to tens of ms). */
    private static final Duration BURST_GAP = Duration.ofMillis(100);
    /** A burst is over when no take happened for this long (its claims answered and first commands run: ~400 ms). */
    private static final Duration BURST_QUIET = Duration.ofMillis(500);
    /** The longest a refill waits for a burst to end (a steady stream of concurrent creates must not keep it empty). */
    private static final Duration MAX_DEFERRAL = Duration.ofSeconds(2);
    /** How often a waiting refill checks whether the pool was closed. */
    private static final Duration WAIT_SLICE = Duration.ofMillis(50);
    private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

    /**
     * One ready sandbox, not yet anyone's.
     *
     * @param envd a client of the member's envd, which answers {@code /ready} and has had one {@code /init} without
     *             token, env or user (so its init path has run once; envd does not journal an init that sets
     *             nothing); its connection is kept for the claimer, who
     *             takes it over ({@link io.agentenv.envd.client.EnvdClients#handOver}) and sends the real init
     * @param processes its init and envd processes, found once it was ready (empty if they could not be read then):
     *                  the claim's liveness starts from them instead of reading {@code /proc} inside the create
     */
    record Member(ContainerId id, SandboxDirs dirs, NetSlot slot, Lineage lineage, HttpEnvdClient envd,
                  Optional<GenerationLiveness.Processes> processes) {
        Member {
            requireNonNull(id, "id is null");
            requireNonNull(dirs, "dirs is null");
            requireNonNull(slot, "slot is null");
            requireNonNull(lineage, "lineage is null");
            requireNonNull(envd, "envd is null");
            requireNonNull(processes, "processes is null");
        }
    }

    /** Names the members' envd clients (in their errors) until a claimer takes one over. */
    private static final SandboxId UNCLAIMED = new SandboxId("warm0000000000000000");

    private final HostParts parts;
    private final TemplateImages templates;
    private final Clock clock;
    private final int size;
    private final SecureRandom random = new SecureRandom();
    private final Object lock = new Object();
    /** Ready members per template, in the order templates were first asked for. Guarded by lock. */
    private final Map<String, Deque<Member>> ready = new LinkedHashMap<>();
    private final AtomicBoolean refilling = new AtomicBoolean();
    private final RefillPacing pacing = new RefillPacing(BURST_GAP, BURST_QUIET);
    private volatile Thread refill;
    private volatile boolean closed;

    WarmPool(HostParts parts, TemplateImages templates, Clock clock, int size) {
        this.parts = requireNonNull(parts, "parts is null");
        this.templates = requireNonNull(templates, "templates is null");
        this.clock = requireNonNull(clock, "clock is null");
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0: " + size);
        }
        this.size = size;
    }

    /** Starts keeping {@code template} warm (idempotent); the refill runs in the background. */
    void keepWarm(String template) {
        if (size == 0 || closed) {
            return;
        }
        synchronized (lock) {
            ready.computeIfAbsent(template, t -> new ArrayDeque<>());
        }
        refillInBackground();
    }

    /** A ready member of {@code template}, never handed out before; empty when none is ready (the caller restores). */
    Optional<Member> take(String template) {
        if (size == 0 || closed) {
            return Optional.empty();
        }
        Member member;
        synchronized (lock) {
            Deque<Member> members = ready.computeIfAbsent(template, t -> new ArrayDeque<>());
            member = members.poll();
        }
        pacing.taken(System.nanoTime());
        refillInBackground();
        return Optional.ofNullable(member);
    }

    int readyCount(String template) {
        synchronized (lock) {
            Deque<Member> members = ready.get(template);
            return members == null ? 0 : members.size();
        }
    }

    private void refillInBackground() {
        if (closed || !refilling.compareAndSet(false, true)) {
            return;
        }
        refill = Thread.ofVirtual().name("warm-pool-refill").start(() -> {
            try {
                fill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                refilling.set(false);
            }
        });
    }

    private void fill() throws InterruptedException {
        while (!closed) {
            String template = null;
            synchronized (lock) {
                for (Map.Entry<String, Deque<Member>> entry : ready.entrySet()) {
                    if (entry.getValue().size() < size) {
                        template = entry.getKey();
                        break;
                    }
                }
            }
            if (template == null) {
                return;
            }
            awaitPacing();
            if (closed) {
                return;
            }
            Member member;
            try {
                member = restore(template);
            } catch (BackendException.Exhausted e) {
                log.atInfo().addKeyValue("template", template).addKeyValue("limit", e.limit())
                        .log("warm pool not refilled: no free sandbox slot");
                return;
            } catch (BackendException e) {
                log.atWarn().addKeyValue("template", template).setCause(e).log("warm pool refill failed; creates restore on demand");
                return;
            }
            boolean keep;
            synchronized (lock) {
                keep = !closed;
                if (keep) {
                    ready.computeIfAbsent(template, t -> new ArrayDeque<>()).add(member);
                }
            }
            if (!keep) {
                destroy(member);
            }
        }
    }

    /** Waits as {@link RefillPacing} says, at most {@link #MAX_DEFERRAL}, returning early once the pool is closed. */
    private void awaitPacing() throws InterruptedException {
        long started = System.nanoTime();
        for (Duration delay = pacing.delay(started); !delay.isZero() && !closed; delay = pacing.delay(System.nanoTime())) {
            long waited = System.nanoTime() - started;
            if (waited >= MAX_DEFERRAL.toNanos()) {
                break;
            }
            Thread.sleep(delay.compareTo(WAIT_SLICE) < 0 ? delay : WAIT_SLICE);
        }
        long waitedMs = (System.nanoTime() - started) / 1_000_000;
        if (waitedMs > 2 * BURST_GAP.toMillis()) { // a burst (a single take waits BURST_GAP)
            log.atInfo().addKeyValue("waited_ms", waitedMs).log("warm pool refill waited for a burst of creates to end");
        }
    }

    /** Restores the template's boot image into a new member and waits until its envd answers. */
    private Member restore(String template) throws BackendException, InterruptedException {
        TemplateImages.Image image = templates.image(template);
        ContainerId id = new ContainerId(parts.settings().idPrefix() + "w" + randomSuffix());
        SandboxDirs dirs = parts.dirs(id);
        NetSlot slot = null;
        HttpEnvdClient client = null;
        try {
            try {
                slot = parts.pool().acquire();
            } catch (NetnsPool.NoFreeSlotException e) {
                throw e.exhausted();
            }
            Files.createDirectories(dirs.envd());
            parts.mountOnNewDisk(image.lineage().lowers(HostParts.layersDir(dirs)), dirs, parts.resources().diskSizeMiB());
            RuncRuntime.writeConfig(dirs.bundle(), parts.ociSpecs().build(
                    parts.spec(id, dirs, slot, "sandbox", image.lineage(), parts.resources(), List.of())));
            parts.runc().restore(id, dirs.bundle(), image.images(), dirs.restoreWork());
            client = parts.envdClients().open(UNCLAIMED, ContainerSandbox.envdAddress(slot), Optional.empty());
            client.waitUntilReady(clock.instant().plus(READY));
            // what a claim's /init needs and does not depend on the request: a connection, and envd's init path run
            // once after the restore (the claim's /init then costs envd ~1.2 ms of CPU instead of ~2.1, measured).
            // It sets nothing, so envd logs it at DEBUG only: the claimer's GET /logs shows its own init alone
            client.init(new EnvdInit(Optional.empty(), Map.of(), Optional.empty(), Optional.empty(), clock.instant()));
            return new Member(id, dirs, slot, image.lineage(), client, processes(id, dirs));
        } catch (IOException | CommandFailedException | EnvdException e) {
            if (client != null) {
                client.close();
            }
            if (slot != null) {
                release(id, dirs, slot);
            }
            throw new BackendException.Recoverable("could not restore a warm sandbox of " + template + ": " + e.getMessage(), e);
        }
    }

    /** The member's init and envd processes now, or empty (logged) when they cannot be read. */
    private static Optional<GenerationLiveness.Processes> processes(ContainerId id, SandboxDirs dirs) {
        try {
            return GenerationLiveness.Processes.find(Generation.initPid(dirs));
        } catch (IOException | RuntimeException e) {
            log.atDebug().addKeyValue("sandbox_id", id.value()).setCause(e)
                    .log("warm sandbox's processes not read; its claim looks them up");
            return Optional.empty();
        }
    }

    private String randomSuffix() {
        char[] chars = new char[12];
        for (int i = 0; i < chars.length; i++) {
            chars[i] = ALPHABET[random.nextInt(ALPHABET.length)];
        }
        return new String(chars);
    }

    /** Stops a member and releases its envd client, container, overlay, disk, cgroup, slot and dir. */
    void destroy(Member member) throws InterruptedException {
        member.envd().close();
        release(member.id(), member.dirs(), member.slot());
    }

    private void release(ContainerId id, SandboxDirs dirs, NetSlot slot) throws InterruptedException {
        try {
            parts.runc().delete(id);
            if (!parts.cgroups().pathsOf(id.value()).isEmpty()) {
                parts.cgroups().reap(id.value());
            }
            parts.unmountRootfs(dirs);
            parts.pool().release(slot);
            HostParts.deleteTree(dirs.dir());
        } catch (IOException | CommandFailedException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("warm sandbox not fully removed");
        }
    }

    /** Stops refilling and destroys every ready member. Idempotent. */
    @Override
    public void close() throws InterruptedException {
        List<Member> members = new ArrayList<>();
        synchronized (lock) {
            closed = true;
        }
        Thread running = refill;
        if (running != null) {
            running.join();
        }
        synchronized (lock) {
            ready.values().forEach(members::addAll);
            ready.values().forEach(Deque::clear);
        }
        for (Member member : members) {
            destroy(member);
        }
    }
}
