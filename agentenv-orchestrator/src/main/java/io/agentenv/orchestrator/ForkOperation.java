package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * POST /sandboxes/{id}/fork: RUNNING to FORKING, capture, back to RUNNING (TTL untouched), then restore the children
 * concurrently on virtual threads, at most {@code forkParallelism} at a time. Each child is launched like a create
 * (staged rollback); one child's failure is reported in its slot and does not affect the others.
 */
final class ForkOperation {
    static final int MAX_CHILDREN = 100;
    private static final Logger log = LoggerFactory.getLogger(ForkOperation.class);

    private final Captures captures;
    private final Launcher launcher;
    private final Semaphore restores;
    private final Artifacts artifacts;
    private final Ids ids;
    private final EventBus events;
    private final Clock clock;

    ForkOperation(
            Captures captures,
            Launcher launcher,
            Artifacts artifacts,
            Ids ids,
            EventBus events,
            Clock clock,
            int forkParallelism) {
        this.captures = requireNonNull(captures, "captures is null");
        this.launcher = requireNonNull(launcher, "launcher is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
        this.ids = requireNonNull(ids, "ids is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.restores = new Semaphore(forkParallelism);
    }

    static void validate(int count, Optional<Duration> timeout) {
        if (count < 1 || count > MAX_CHILDREN) {
            throw AgentEnvException.invalidArgument("count must be between 1 and " + MAX_CHILDREN + ": " + count);
        }
        if (timeout.isPresent() && timeout.get().isNegative()) {
            throw AgentEnvException.invalidArgument("timeout must not be negative");
        }
    }

    List<ForkResult> fork(SandboxId id, int count, Optional<Duration> timeout) {
        validate(count, timeout);
        SandboxRecord source = captures.acquire(id, SandboxState.FORKING, "be forked");
        Path dir;
        try {
            dir = artifacts.newForkDir(id);
        } catch (AgentEnvException e) {
            captures.release(id, SandboxState.FORKING);
            throw e;
        }
        SnapshotState state = captures.capture(id, SandboxState.FORKING, dir);
        try {
            captures.release(id, SandboxState.FORKING);
            Duration childTimeout = timeout.orElse(source.timeout());
            List<Future<ForkResult>> children = new ArrayList<>();
            try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < count; i++) {
                    children.add(threads.submit(() -> restoreChild(source, state, childTimeout)));
                }
            }
            List<ForkResult> results = new ArrayList<>();
            for (Future<ForkResult> child : children) {
                results.add(outcome(child));
            }
            log.atInfo()
                    .addKeyValue("sandbox_id", id.value())
                    .addKeyValue("children", count)
                    .addKeyValue(
                            "started",
                            results.stream()
                                    .filter(ForkResult.Child.class::isInstance)
                                    .count())
                    .log("sandbox forked");
            return results;
        } finally {
            artifacts.delete(dir); // children no longer depend on the capture once started (SPI contract)
        }
    }

    private ForkResult restoreChild(SandboxRecord source, SnapshotState state, Duration timeout)
            throws InterruptedException {
        SandboxId childId = ids.newSandboxId();
        restores.acquire();
        try {
            SandboxRecord child = source.forChild(childId, clock.instant(), timeout, SandboxState.CREATING);
            SandboxView view = launcher.launch(child, new LaunchSource.Snapshot(state));
            events.publish(new LifecycleEvent.Forked(childId, clock.instant(), source.id()));
            return new ForkResult.Child(view);
        } catch (AgentEnvException e) {
            return new ForkResult.Failed(e.kind(), e.getMessage());
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("sandbox_id", childId.value()).setCause(e).log("fork child failed");
            return new ForkResult.Failed(ErrorKind.INTERNAL, "fork child could not be started");
        } finally {
            restores.release();
        }
    }

    private static ForkResult outcome(Future<ForkResult> child) {
        try {
            return child.get();
        } catch (ExecutionException e) {
            return new ForkResult.Failed(ErrorKind.INTERNAL, "fork child could not be started");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new ForkResult.Failed(ErrorKind.UNAVAILABLE, "interrupted");
        }
    }
}
