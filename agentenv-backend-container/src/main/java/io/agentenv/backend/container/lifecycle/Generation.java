package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.GuestProcFiles;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.SandboxDirs;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.Resources;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The handle of one runtime generation of one container sandbox: what it is (spec, container id, dirs, resources)
 * and the state its operations share (phase, network slot, envd client, lineage, whether this backend froze it).
 * {@link GenerationStart}, {@link GenerationPause}, {@link GenerationCapture} and {@link GenerationRelease} move it;
 * {@link ContainerSandbox} is the SPI face.
 */
public final class Generation {

    private static final Logger log = LoggerFactory.getLogger(Generation.class);

    final LaunchSpec spec;
    final ContainerSandbox.Launch launch;
    final ContainerId id;
    final SandboxDirs dirs;
    final Resources resources;
    final AtomicReference<ContainerSandbox.Phase> phase;
    /** The warm-pool member this generation claims at start (its container, dirs and slot), if any. */
    final Optional<WarmPool.Member> warm;

    private final NetnsPool pool;
    private final AtomicReference<NetSlot> slot;
    private final NetSlot liveSlot;
    private volatile List<String> bootEnv = List.of();
    /** The claimed warm member's processes, once the start took that member's container as it was. */
    private volatile Optional<GenerationLiveness.Processes> claimedProcesses = Optional.empty();
    /** Whether the start sent envd this sandbox's {@code /init} (false for a member initialised for it already). */
    private volatile boolean initialisedAtStart = true;

    private volatile EnvdClient client;
    private volatile Lineage lineage;
    private volatile boolean frozen;

    /**
     * @param dirs the container's dirs ({@link ContainerNames#dirs})
     * @param pool where the slot goes back to
     */
    Generation(
            LaunchSpec spec,
            ContainerSandbox.Launch launch,
            ContainerId id,
            SandboxDirs dirs,
            NetSlot slot,
            NetnsPool pool,
            Resources resources,
            ContainerSandbox.Phase initial,
            Optional<WarmPool.Member> warm) {
        this.spec = requireNonNull(spec, "spec is null");
        this.launch = requireNonNull(launch, "launch is null");
        this.id = requireNonNull(id, "id is null");
        this.resources = requireNonNull(resources, "resources is null");
        this.dirs = requireNonNull(dirs, "dirs is null");
        this.pool = requireNonNull(pool, "pool is null");
        this.warm = requireNonNull(warm, "warm is null");
        this.slot = new AtomicReference<>(requireNonNull(slot, "slot is null"));
        this.liveSlot = slot;
        this.phase = new AtomicReference<>(requireNonNull(initial, "initial is null"));
        if (launch instanceof ContainerSandbox.Launch.Reattached(Lineage existing)) {
            this.lineage = existing;
        }
    }

    /** The slot this generation was built with (still readable after the slot went back to the pool). */
    NetSlot liveSlot() {
        return liveSlot;
    }

    List<String> bootEnv() {
        return bootEnv;
    }

    void bootEnv(List<String> env) {
        bootEnv = env;
    }

    /** What {@link GenerationLiveness#running} starts from: the claimed member's processes, or empty (look them up). */
    Optional<GenerationLiveness.Processes> claimedProcesses() {
        return claimedProcesses;
    }

    void claimedProcesses(Optional<GenerationLiveness.Processes> processes) {
        claimedProcesses = processes;
    }

    /**
     * Whether start sent envd its {@code /init}: false when the claimed member's envd had this sandbox's already, so an
     * envd that replaced the member's since has none ({@link GenerationLiveness#running}).
     */
    boolean initialisedAtStart() {
        return initialisedAtStart;
    }

    void initialisedAtStart(boolean sent) {
        initialisedAtStart = sent;
    }

    Lineage lineage() {
        return lineage;
    }

    void lineage(Lineage current) {
        lineage = current;
    }

    boolean frozen() {
        return frozen;
    }

    void frozen(boolean now) {
        frozen = now;
    }

    EnvdClient client() {
        return client;
    }

    void client(EnvdClient opened) {
        client = opened;
    }

    void closeClient() {
        EnvdClient current = client;
        client = null;
        if (current != null) {
            current.close();
        }
    }

    NetSlot requireSlot() throws BackendException {
        NetSlot held = slot.get();
        if (held == null) {
            throw new BackendException.Terminal("sandbox " + spec.id() + " has no network slot any more");
        }
        return held;
    }

    /** Gives the slot back to the pool, once. */
    void releaseSlot() throws CommandFailedException, InterruptedException {
        NetSlot held = slot.getAndSet(null);
        if (held != null) {
            pool.release(held);
        }
    }

    /** Gives the slot back to the pool, once, without waiting for its veth's removal ({@link NetnsPool#retire}). */
    void retireSlot() throws CommandFailedException, InterruptedException {
        NetSlot held = slot.getAndSet(null);
        if (held != null) {
            pool.retire(held);
        }
    }

    void requireRunning(String what) throws BackendException {
        if (phase.get() != ContainerSandbox.Phase.RUNNING) {
            throw new BackendException.Recoverable("cannot " + what + " sandbox " + spec.id() + ": " + phase.get());
        }
    }

    long initPid() throws IOException {
        return initPid(dirs);
    }

    /**
     * The sandbox's boot id, which a resume with memory and the sandboxes restored from its captures keep; empty when it
     * has none or it cannot be read (logged: they get a new one).
     */
    Optional<String> bootId() {
        try {
            return GuestProcFiles.bootId(dirs);
        } catch (IOException | RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", spec.id().value())
                    .setCause(e)
                    .log("the sandbox's boot id could not be read; a resume or restore of this state gets a new one");
            return Optional.empty();
        }
    }

    /** The host pid of the container's init, as runc wrote it into the bundle. */
    static long initPid(SandboxDirs dirs) throws IOException {
        return Long.parseLong(Files.readString(dirs.bundle().resolve(RuncRuntime.BUNDLE_PIDFILE))
                .strip());
    }

    /** The first failure as a Terminal error with {@code what} and the others suppressed. */
    BackendException.Terminal notReleased(String what, List<Exception> failures) {
        BackendException.Terminal error = new BackendException.Terminal(
                "sandbox " + spec.id() + " " + what + ": " + failures.getFirst().getMessage(), failures.getFirst());
        failures.subList(1, failures.size()).forEach(error::addSuppressed);
        return error;
    }
}
