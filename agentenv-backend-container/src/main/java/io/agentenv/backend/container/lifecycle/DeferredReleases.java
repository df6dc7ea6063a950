package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.Attempts;
import io.agentenv.backend.container.leftovers.LeftoverReaper;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The part of a pause's or a kill's release that finishes after the operation has answered: what holds no memory state
 * and nothing a paused state needs (the network slot, runc's state and the cgroups of the dead container, the sandbox's
 * mounts and dir, the warm-pool claim). A pause answers once the sandbox's processes are gone (its RAM released) and
 * its state is durable in the artifact dir, a kill once its processes are gone; these steps run on, one release per
 * sandbox.
 *
 * <p>Whatever would reuse what a release still holds waits for it: the resume of the same sandbox ({@link #await}:
 * it restores into the same container id and sandbox dir, after the claim is gone), the kill of the paused sandbox
 * (also {@link #await}, through {@code ContainerBackendFactory#discardPaused}, so a killed sandbox leaves nothing), a
 * close after a kill, and shutdown ({@link #awaitAll}), so a stopped backend leaves nothing. A release that failed is
 * tried once more by the one who waits for it (every step is idempotent), and stays for the next one to try if it
 * fails again; after a crash the start-up reconciler ({@link LeftoverReaper}) removes what was left, as for any sandbox
 * that is not running. Holds no lock while a step runs.
 */
public final class DeferredReleases {

    private static final Logger log = LoggerFactory.getLogger(DeferredReleases.class);

    /** One sandbox's release: its steps and how they went. */
    private record Release(List<Attempts.Step> steps, CompletableFuture<List<Exception>> outcome) {}

    private final Map<SandboxId, Release> inFlight = new ConcurrentHashMap<>();

    /**
     * Runs {@code parallel} at once, each on its own virtual thread, and {@code after} once they are all done (each
     * step attempted whatever the others did); a resume, kill or close of {@code id} waits for all of it.
     */
    void start(SandboxId id, List<Attempts.Step> parallel, List<Attempts.Step> after) {
        requireNonNull(id, "id is null");
        List<CompletableFuture<List<Exception>>> running = new ArrayList<>();
        for (Attempts.Step step : parallel) {
            running.add(onVirtualThread(List.of(step)));
        }
        CompletableFuture<List<Exception>> outcome = CompletableFuture.allOf(running.toArray(CompletableFuture[]::new))
                .thenCompose(done -> onVirtualThread(after))
                .thenApply(last -> {
                    List<Exception> failures = new ArrayList<>();
                    running.forEach(r -> failures.addAll(r.join()));
                    failures.addAll(last);
                    return failures;
                });
        List<Attempts.Step> all = new ArrayList<>(parallel);
        all.addAll(after);
        Release release = new Release(List.copyOf(all), outcome);
        Release previous = inFlight.put(id, release);
        if (previous != null && !previous.outcome().isDone()) { // a resume waits first: only a bug gets here
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .log("a release started while the previous one of the sandbox runs");
        }
        outcome.whenComplete((failures, error) -> {
            if (error != null || !failures.isEmpty()) {
                log.atWarn()
                        .addKeyValue("sandbox_id", id.value())
                        .setCause(error != null ? error : failures.getFirst())
                        .log(
                                "releasing a paused or killed sandbox failed; the next resume, kill, close or shutdown tries again");
            } else {
                inFlight.remove(id, release);
            }
        });
    }

    /**
     * Returns once the release of {@code id}'s last pause or kill is done (at once when there is none). A release that failed
     * is run once more, here; when that fails too the sandbox cannot be resumed or killed now (Recoverable: it stays
     * paused, and the next call tries again).
     */
    public void await(SandboxId id) throws BackendException, InterruptedException {
        Release release = inFlight.get(id);
        if (release == null) {
            return;
        }
        List<Exception> failures = settle(id, release);
        if (!failures.isEmpty()) {
            BackendException.Recoverable error = new BackendException.Recoverable(
                    "sandbox " + id + " is not released yet: "
                            + failures.getFirst().getMessage(),
                    failures.getFirst());
            failures.subList(1, failures.size()).forEach(error::addSuppressed);
            throw error;
        }
    }

    /**
     * Waits for every release in flight (shutdown); a failed one is tried once more, as by {@link #await}, and when
     * that fails too it is logged, not thrown (the start-up reaper removes what it left).
     */
    public void awaitAll() throws InterruptedException {
        for (Map.Entry<SandboxId, Release> entry : List.copyOf(inFlight.entrySet())) {
            List<Exception> failures = settle(entry.getKey(), entry.getValue());
            if (!failures.isEmpty()) {
                log.atWarn()
                        .addKeyValue("sandbox_id", entry.getKey().value())
                        .setCause(failures.getFirst())
                        .log(
                                "releasing a paused or killed sandbox failed again at shutdown; the next start-up removes what is left");
            }
        }
    }

    /**
     * Waits, at most {@code max}, for one release that is still running to finish well (a create that found no free
     * slot: a release in flight is about to free one). A release that ends in failure frees nothing, so the wait goes
     * on for the others. True when one finished well or the time ran out while some still run (the caller looks for a
     * free slot again either way); false when none is running, or every one that was has failed.
     */
    public boolean awaitOne(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (true) {
            List<CompletableFuture<List<Exception>>> running = inFlight.values().stream()
                    .map(Release::outcome)
                    .filter(outcome -> !outcome.isDone())
                    .toList();
            if (running.isEmpty()) {
                return false;
            }
            try {
                CompletableFuture.anyOf(running.toArray(CompletableFuture<?>[]::new))
                        .get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return true;
            } catch (ExecutionException e) {
                // one failed: look at the others
            }
            for (CompletableFuture<List<Exception>> outcome : running) {
                if (outcome.isDone()
                        && !outcome.isCompletedExceptionally()
                        && outcome.join().isEmpty()) {
                    return true;
                }
            }
        }
    }

    /** Sandboxes whose release has not finished (or failed and was not tried again yet). */
    public List<SandboxId> inFlight() {
        return List.copyOf(inFlight.keySet());
    }

    /** Sandboxes whose release finished with a failure and waits for the next one to try it (tests watch for it). */
    public List<SandboxId> failed() {
        return inFlight.entrySet().stream()
                .filter(entry -> {
                    CompletableFuture<List<Exception>> outcome =
                            entry.getValue().outcome();
                    return outcome.isDone()
                            && (outcome.isCompletedExceptionally()
                                    || !outcome.join().isEmpty());
                })
                .map(Map.Entry::getKey)
                .toList();
    }

    /**
     * Waits for {@code release} and runs all its steps once more if it failed; drops it once it succeeded (a release
     * that failed again stays, for the next caller to try). The failures of the last run.
     */
    private List<Exception> settle(SandboxId id, Release release) throws InterruptedException {
        List<Exception> failures = outcome(release);
        if (!failures.isEmpty()) {
            failures = new ArrayList<>();
            for (Attempts.Step step : release.steps()) {
                Attempts.attempt(failures, step);
            }
        }
        if (failures.isEmpty()) {
            inFlight.remove(id, release);
        }
        return failures;
    }

    private static List<Exception> outcome(Release release) throws InterruptedException {
        try {
            return release.outcome().get();
        } catch (ExecutionException e) {
            return List.of(e.getCause() instanceof Exception cause ? cause : new IllegalStateException(e.getCause()));
        }
    }

    /** Runs the steps in order on a new virtual thread; completes with their failures. */
    private static CompletableFuture<List<Exception>> onVirtualThread(List<Attempts.Step> steps) {
        CompletableFuture<List<Exception>> done = new CompletableFuture<>();
        Thread.ofVirtual().name("deferred-release").start(() -> {
            List<Exception> failures = new ArrayList<>();
            try {
                for (Attempts.Step step : steps) {
                    Attempts.attempt(failures, step);
                }
            } catch (InterruptedException e) {
                failures.add(e);
            } catch (RuntimeException | Error e) {
                done.completeExceptionally(e);
                return;
            }
            done.complete(failures);
        });
        return done;
    }
}
