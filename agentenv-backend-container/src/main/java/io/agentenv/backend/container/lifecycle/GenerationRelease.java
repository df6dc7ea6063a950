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
    private static final Duration REAP_POLL = Duration.ofMillis(1);

    private final CgroupTree cgroups;
    private final RuncRuntime runc;
    private final SandboxRootfs sandboxRootfs;
    private final ContainerNames names;
    private final DeferredReleases deferredReleases;
    private final InitReaper reaper;

    public GenerationRelease(
            CgroupTree cgroups,
            RuncRuntime runc,
            SandboxRootfs sandboxRootfs,
            ContainerNames names,
            DeferredReleases deferredReleases,
            InitReaper reaper) {
        this.cgroups = requireNonNull(cgroups, "cgroups is null");
        this.runc = requireNonNull(runc, "runc is null");
        this.sandboxRootfs = requireNonNull(sandboxRootfs, "sandboxRootfs is null");
        this.names = requireNonNull(names, "names is null");
        this.deferredReleases = requireNonNull(deferredReleases, "deferredReleases is null");
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

    /**
     * Kills the generation: freezes its cgroup (the kernel stops every task of it; none runs again) and returns. The
     * rest runs after the return in {@link DeferredReleases}: SIGKILL to the init, thaw (the kernel then kills the
     * rest of its pid namespace before the init exits), the init reaped, then runc's state, the cgroups, the rootfs
     * mounts, the slot, the dir and the claim. {@link #close} of the same generation and shutdown wait for that; after
     * a crash the start-up reconciler removes the frozen container like any unclaimed one. A generation that never
     * ran, or is paused, is closed as usual; one whose freeze fails is killed and reaped before the return.
     */
    void kill(Generation gen) throws BackendException {
        var id = gen.id;
        ContainerSandbox.Phase before = gen.phase.get();
        Optional<HostProcess> init = initProcess(gen);
        if (before != ContainerSandbox.Phase.RUNNING
                || init.isEmpty()
                || !gen.phase.compareAndSet(before, ContainerSandbox.Phase.CLOSED)) {
            close(gen); // not running (or another call moved it meanwhile): close waits for whatever runs
            return;
        }
        gen.closeClient();
        long started = System.nanoTime();
        boolean frozen = false;
        try {
            cgroups.freeze(id);
            frozen = true;
        } catch (IOException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .setCause(e)
                    .log("the sandbox could not be frozen; killing it before the answer");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while killing sandbox " + gen.spec.id(), e);
        }
        if (!frozen) {
            try {
                stop(gen, init.get(), false);
            } catch (Exception e) {
                log.atWarn()
                        .addKeyValue("sandbox_id", gen.spec.id().value())
                        .setCause(e)
                        .log("killing the unfrozen sandbox failed; closing it instead");
                gen.phase.set(before);
                close(gen); // not stopped: release everything now, as a close does
                return;
            }
        }
        long stopped = System.nanoTime();
        long[] took = new long[3]; // stop, container (runc, cgroups, mounts), remove: ms each
        boolean stopInRelease = frozen;
        deferredReleases.start(
                gen.spec.id(),
                List.of(() -> {
                    if (stopInRelease) {
                        took[0] = Attempts.timed(() -> stop(gen, init.get(), true));
                    }
                    took[1] = Attempts.timed(() -> {
                        List<Exception> failures = new ArrayList<>();
                        releaseContainer(gen, true, failures);
                        if (!failures.isEmpty()) {
                            throw gen.notReleased("not fully released after its kill", failures);
                        }
                    });
                }),
                List.of(
                        gen::retireSlot,
                        () -> took[2] = Attempts.timed(() -> {
                            FileTrees.deleteTree(gen.dirs.dir());
                            names.unclaim(gen.spec.id());
                        }),
                        () -> log.atInfo()
                                .addKeyValue("sandbox_id", gen.spec.id().value())
                                .addKeyValue("answer_ms", (stopped - started) / 1_000_000)
                                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                                .addKeyValue("stop_ms", took[0])
                                .addKeyValue("container_ms", took[1])
                                .addKeyValue("remove_ms", took[2])
                                .log("killed container sandbox released")));
    }

    /**
     * SIGKILL to every process of the sandbox, thaw, and the init reaped: no process of the sandbox is left. A frozen
     * task cannot exit, so the pids read from the frozen cgroup are still its tasks when they are signalled; a sandbox
     * that could not be frozen gets the signal at its init only (the kernel kills the rest of its pid namespace).
     */
    private void stop(Generation gen, HostProcess init, boolean frozen) throws Exception {
        if (frozen) {
            cgroups.pids(gen.id.value())
                    .forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        }
        init.kill();
        cgroups.thawIfFrozen(gen.id.value());
        awaitReaped(gen, Optional.of(init));
    }

    /**
     * runc's state ({@code runtimeRan}: runc knows the container) and the cgroups of the dead container, then its rootfs
     * mounts and disk; each step runs whatever the others did, their failures go to {@code failures}.
     */
    private void releaseContainer(Generation gen, boolean runtimeRan, List<Exception> failures)
            throws InterruptedException {
        if (runtimeRan) {
            Attempts.attempt(failures, () -> runc.delete(gen.id));
        }
        Attempts.attempt(failures, () -> {
            if (!cgroups.pathsOf(gen.id.value()).isEmpty()) {
                cgroups.reap(gen.id.value());
            }
        });
        Attempts.attempt(failures, () -> sandboxRootfs.unmount(gen.dirs));
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
            Attempts.attempt(failures, () -> deferredReleases.await(gen.spec.id()));
            Attempts.attempt(failures, () -> cgroups.thawIfFrozen(id.value()));
            releaseContainer(
                    gen,
                    before != ContainerSandbox.Phase.PREPARED
                            || Files.exists(gen.dirs.bundle().resolve("config.json")),
                    failures);
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
