package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.Attempts;
import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.HostProcess;
import io.agentenv.backend.container.host.InitReaper;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.SandboxRootfs;
import io.agentenv.spi.BackendException;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a generation: stops the container and releases its overlay, cgroup, network slot and dir, and returns once
 * no process of it is left (its init reaped). After a pause only
 * the (already released) runtime is gone; the paused files belong to the artifact dir and are never touched here.
 */
public final class GenerationRelease {

    private static final Logger log = LoggerFactory.getLogger(GenerationRelease.class);
    private static final Duration REAP_WAIT = Duration.ofSeconds(5);
    private static final Duration REAP_POLL = Duration.ofMillis(5);

    private final CgroupTree cgroups;
    private final RuncRuntime runc;
    private final SandboxRootfs sandboxRootfs;
    private final ContainerNames names;
    private final PauseReleases pauseReleases;
    private final InitReaper reaper;

    public GenerationRelease(
            CgroupTree cgroups,
            RuncRuntime runc,
            SandboxRootfs sandboxRootfs,
            ContainerNames names,
            PauseReleases pauseReleases,
            InitReaper reaper) {
        this.cgroups = requireNonNull(cgroups, "cgroups is null");
        this.runc = requireNonNull(runc, "runc is null");
        this.sandboxRootfs = requireNonNull(sandboxRootfs, "sandboxRootfs is null");
        this.names = requireNonNull(names, "names is null");
        this.pauseReleases = requireNonNull(pauseReleases, "pauseReleases is null");
        this.reaper = requireNonNull(reaper, "reaper is null");
    }

    /**
     * The container's init (tini) before it is killed, if the container ran: killed, it stays a zombie until its parent
     * reaps it, which is this server ({@link InitReaper}) or, where that is not possible or after a restart, the
     * host's init.
     */
    private static Optional<HostProcess> initProcess(Generation gen) {
        try {
            Optional<HostProcess> found = HostProcess.of(gen.initPid());
            // the pid file may be older than the process that has the pid now
            return found.isPresent() && found.get().name().equals(Optional.of("tini")) ? found : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // never ran, or already gone
        }
    }

    /**
     * Returns once the init has left the process table (reaped at once when it is this server's child), so a kill
     * answers only when no process of the sandbox is left at all (its other processes are gone before its cgroup could
     * be removed). Bounded: a parent that does not reap is logged, not waited for.
     */
    private void awaitReaped(Generation gen, Optional<HostProcess> init) throws InterruptedException {
        if (init.isEmpty()) {
            return;
        }
        long deadline = System.nanoTime() + REAP_WAIT.toNanos();
        try {
            while (!reaper.reap(init.get())) {
                if (System.nanoTime() > deadline) {
                    log.atWarn()
                            .addKeyValue("sandbox_id", gen.spec.id().value())
                            .addKeyValue("pid", init.get().pid())
                            .log("the container's init was killed but its parent has not reaped it");
                    return;
                }
                LockSupport.parkNanos(REAP_POLL.toNanos());
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        } catch (IOException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .setCause(e)
                    .log("cannot read /proc");
        }
    }

    /** Every step is idempotent, so a failed close can be repeated. */
    void close(Generation gen) throws BackendException {
        var id = gen.id;
        ContainerSandbox.Phase before = gen.phase.getAndSet(ContainerSandbox.Phase.CLOSED);
        gen.closeClient();
        if (before == ContainerSandbox.Phase.PAUSED) {
            return;
        }
        long started = System.nanoTime();
        long reapWait = 0;
        List<Exception> failures = new ArrayList<>();
        Optional<HostProcess> init = initProcess(gen);
        try {
            // after a pause whose release still runs (closed twice, or a pause that failed late): let it finish first,
            // its steps are among the ones below and must not race them
            Attempts.attempt(failures, () -> pauseReleases.await(gen.spec.id()));
            Attempts.attempt(failures, () -> cgroups.thawIfFrozen(id.value()));
            if (before != ContainerSandbox.Phase.PREPARED
                    || Files.exists(gen.dirs.bundle().resolve("config.json"))) {
                Attempts.attempt(failures, () -> runc.delete(id));
            }
            Attempts.attempt(failures, () -> {
                if (!cgroups.pathsOf(id.value()).isEmpty()) {
                    cgroups.reap(id.value());
                }
            });
            Attempts.attempt(failures, () -> sandboxRootfs.unmount(gen.dirs));
            Attempts.attempt(failures, gen::releaseSlot);
            Attempts.attempt(failures, () -> FileTrees.deleteTree(gen.dirs.dir()));
            Attempts.attempt(failures, () -> names.unclaim(gen.spec.id()));
            long reaping = System.nanoTime();
            awaitReaped(gen, init);
            reapWait = System.nanoTime() - reaping;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while closing sandbox " + gen.spec.id(), e);
        }
        if (!failures.isEmpty()) {
            throw gen.notReleased("not fully released", failures);
        }
        if (before != ContainerSandbox.Phase.CLOSED) {
            log.atInfo()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                    .addKeyValue("reap_wait_ms", reapWait / 1_000_000)
                    .log("container sandbox closed");
        }
    }
}
