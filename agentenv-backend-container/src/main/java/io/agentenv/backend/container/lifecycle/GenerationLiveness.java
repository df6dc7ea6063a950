package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.ExitWatch;
import io.agentenv.backend.container.host.HostProcess;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.Liveness;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The liveness of a running generation ({@code SandboxBackend.liveness}), from the host's process table: the container
 * is gone once its init (tini, PID 1 inside) no longer runs, since the kernel then kills everything else in its pid
 * namespace. Inside, tini runs a supervisor shell that restarts envd whenever it exits (OOM-killed, killed with
 * {@code sudo kill -9}); a check that finds another envd process than the one last initialised sends it the
 * generation's {@code /init} again (access token, env vars, default user and workdir), from the host over the same
 * TCP path as at start, on a virtual thread so the check stays quick. Until then the restarted envd is uninitialised
 * (as a fresh envd at create is), for about one check interval plus its start-up.
 *
 * <p>A check costs what changed: the init and the initialised envd are each watched through a pidfd
 * ({@link ExitWatch}), so while both run a check is two zero-timeout polls and reads nothing from {@code /proc}; only
 * after envd exited does a check look for its successor among the init's children (until one is initialised). The
 * descriptors are given back by {@link #stop} (close, pause). {@link #running}, {@link #check} and {@link #stop} are
 * lifecycle calls of the instance, which the orchestrator makes one at a time.
 */
public final class GenerationLiveness {

    private static final Logger log = LoggerFactory.getLogger(GenerationLiveness.class);
    private static final Duration REINIT_WAIT = Duration.ofSeconds(30);

    private final Generation gen;
    private final Clock clock;
    private final AtomicBoolean reinitialising = new AtomicBoolean();
    /** The container's init, watched; empty until found. */
    private volatile Optional<ExitWatch> init = Optional.empty();
    /** The envd process last seen, watched; empty when none was found or it exited. */
    private volatile Optional<ExitWatch> envd = Optional.empty();
    /** The envd process that has the generation's /init (the one start initialised, or the last re-initialised). */
    private volatile Optional<HostProcess> initialisedEnvd = Optional.empty();

    private volatile boolean stopped;

    /**
     * The container's init and its envd as found in the host's process table at one moment (a warm-pool member's
     * after its restore, so its claim reads nothing from {@code /proc}); {@code envd} empty when none ran then.
     */
    record Processes(HostProcess init, Optional<HostProcess> envd) {
        Processes {
            requireNonNull(init, "init is null");
            requireNonNull(envd, "envd is null");
        }

        /** The running init of that pid and its envd now; empty when the init does not run. */
        static Optional<Processes> find(long initPid) throws IOException {
            Optional<HostProcess> init = HostProcess.of(initPid);
            if (init.isEmpty() || !init.get().running()) {
                return Optional.empty();
            }
            return Optional.of(new Processes(init.get(), GenerationLiveness.envd(init.get())));
        }
    }

    GenerationLiveness(Generation gen, Clock clock) {
        this.gen = requireNonNull(gen, "gen is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /**
     * Right after start (or re-attach): notes the init and the envd that was just initialised, looked up in
     * {@code /proc}, or {@code known} (a claimed warm member's, found when the pool restored it). A known envd that
     * exited since then is looked up here: its successor is the one the claim initialised when {@code initialisedNow}
     * (start sent the {@code /init}), else it has no init yet and the next check sends it.
     */
    void running(Optional<Processes> known, boolean initialisedNow) {
        try {
            Optional<Processes> found = known.isPresent() ? known : Processes.find(gen.initPid());
            if (found.isPresent()) {
                watchInit(found.get().init());
                watchEnvd(found.get().envd());
                Optional<HostProcess> initialised = found.get().envd();
                if (known.isPresent()
                        && envd.isEmpty()) { // the member's envd exited since: its successor took the init
                    Optional<HostProcess> successor = envd(found.get().init());
                    watchEnvd(successor);
                    initialised = initialisedNow ? successor : Optional.empty();
                }
                initialisedEnvd = initialised;
            }
        } catch (NoSuchFileException | NumberFormatException e) {
            log.atDebug()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .setCause(e)
                    .log("the container's init pid is not known; the first liveness check will look again");
        } catch (IOException | RuntimeException e) {
            log.atDebug()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .setCause(e)
                    .log("cannot note the container's processes; the first liveness check will");
        }
    }

    Liveness check() throws BackendException {
        if (gen.phase.get() != ContainerSandbox.Phase.RUNNING || stopped) {
            return Liveness.ALIVE;
        }
        try {
            if (init.isEmpty()) {
                Optional<HostProcess> found = initProcess();
                if (found.isEmpty()) {
                    return new Liveness.Gone("the container's init is not running");
                }
                watchInit(found.get());
                if (init.isEmpty()) {
                    return new Liveness.Gone(
                            "the container's init (host pid " + found.get().pid() + ") exited");
                }
            }
            ExitWatch initWatch = init.get();
            if (initWatch.exited()) {
                return new Liveness.Gone(
                        "the container's init (host pid " + initWatch.process().pid() + ") exited");
            }
            if (envd.isPresent()
                    && !envd.get().exited()
                    && envd.map(ExitWatch::process).equals(initialisedEnvd)) {
                return Liveness.ALIVE; // nothing changed: no /proc read
            }
            Optional<HostProcess> current = envd(initWatch.process());
            if (!current.equals(envd.map(ExitWatch::process))) {
                watchEnvd(current);
            }
            if (current.isPresent() && !current.equals(initialisedEnvd)) {
                reinitialise(current.get());
            }
            return Liveness.ALIVE;
        } catch (IOException | RuntimeException e) {
            throw new BackendException.Recoverable(
                    "cannot read the processes of sandbox " + gen.spec.id() + ": " + e, e);
        }
    }

    /** Gives the watches' descriptors back; later checks answer alive (the generation is closed or paused). */
    void stop() {
        stopped = true;
        init.ifPresent(ExitWatch::close);
        envd.ifPresent(ExitWatch::close);
        init = Optional.empty();
        envd = Optional.empty();
    }

    private void watchInit(HostProcess process) throws IOException {
        init.ifPresent(ExitWatch::close);
        init = ExitWatch.open(process);
    }

    private void watchEnvd(Optional<HostProcess> process) throws IOException {
        envd.ifPresent(ExitWatch::close);
        envd = Optional.empty();
        if (process.isPresent()) {
            envd = ExitWatch.open(process.get());
        }
    }

    private Optional<HostProcess> initProcess() throws IOException {
        long pid;
        try {
            pid = gen.initPid();
        } catch (NoSuchFileException | NumberFormatException e) {
            return Optional.empty();
        }
        Optional<HostProcess> found = HostProcess.of(pid);
        return found.isPresent() && found.get().running() ? found : Optional.empty();
    }

    /**
     * envd: tini → supervisor shell → java, or tini → java in a sandbox checkpointed before the supervisor existed
     * (whose envd, once dead, ends the container). Empty between a death and the restart.
     */
    private static Optional<HostProcess> envd(HostProcess init) throws IOException {
        for (HostProcess child : init.children()) {
            Optional<String> name = child.name();
            if (name.equals(Optional.of("java"))) {
                return Optional.of(child);
            }
            if (name.equals(Optional.of("sh"))) {
                for (HostProcess grandchild : child.children()) {
                    if (grandchild.name().equals(Optional.of("java"))) {
                        return Optional.of(grandchild);
                    }
                }
            }
        }
        return Optional.empty();
    }

    /** One re-init at a time; a failed one is retried by the next check (the envd is still not the initialised one). */
    private void reinitialise(HostProcess envd) {
        EnvdClient client = gen.client();
        if (client == null || !reinitialising.compareAndSet(false, true)) {
            return;
        }
        String sandbox = gen.spec.id().value();
        log.atWarn()
                .addKeyValue("sandbox_id", sandbox)
                .addKeyValue("envd_pid", envd.pid())
                .log("envd was restarted inside the sandbox; initialising it again");
        Thread.ofVirtual().name("aenv-envd-reinit-" + sandbox).start(() -> {
            try {
                client.waitUntilReady(clock.instant().plus(REINIT_WAIT));
                client.init(GenerationStart.initFor(gen.spec, clock));
                initialisedEnvd = Optional.of(envd);
                log.atInfo()
                        .addKeyValue("sandbox_id", sandbox)
                        .addKeyValue("envd_pid", envd.pid())
                        .log("restarted envd initialised");
            } catch (EnvdException | RuntimeException e) {
                log.atWarn()
                        .addKeyValue("sandbox_id", sandbox)
                        .setCause(e)
                        .log("restarted envd not initialised; the next liveness check retries");
            } finally {
                reinitialising.set(false);
            }
        });
    }
}
