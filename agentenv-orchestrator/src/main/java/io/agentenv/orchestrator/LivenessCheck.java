package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.Liveness;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices sandboxes whose instance died on its own (a container whose init exited, a VM that crashed) and removes them
 * like a kill, so they are neither listed as running nor answer with failing guest calls. One round asks every live
 * instance of a RUNNING sandbox through {@link SandboxBackend#liveness()} under a try-lock on the instance: an instance
 * busy with a lifecycle call (pause, snapshot, ...) is skipped, that call meets the death itself (a terminal failure
 * removes the sandbox; a recoverable one leaves it RUNNING for the next round). Which sandboxes are RUNNING comes from
 * one store read per round at most ({@link Records#runningIds}: none while no sandbox changed); a sandbox that leaves
 * RUNNING after it is harmless, since the removal is a compare-and-set from RUNNING, and one that becomes RUNNING
 * after it is checked in the next round.
 *
 * <p>The same round removes RUNNING records that have no instance here at all: every operation registers its instance
 * before it writes RUNNING and writes another state before it lets go of it, so such a record is left by a write whose
 * outcome could not be learned (a launch or resume whose RUNNING write reached a networked store that then went away
 * before it answered, so the operation rolled back around a record that stayed RUNNING; or a discard whose delete
 * failed). Without this it would be listed as running, with nothing behind it, until its TTL ran out.
 */
final class LivenessCheck {
    private static final Logger log = LoggerFactory.getLogger(LivenessCheck.class);

    enum Outcome {
        ALIVE,
        BUSY,
        NOT_RUNNING,
        REMOVED,
        FAILED
    }

    /** What one round did, per sandbox with a live instance and per RUNNING sandbox without one. */
    record Round(Map<SandboxId, Outcome> outcomes) {
        Round {
            outcomes = Map.copyOf(outcomes);
        }

        Outcome of(SandboxId id) {
            return outcomes.get(id);
        }
    }

    private final KillOperation kills;

    private final Records records;
    private final SandboxRuntime runtime;

    LivenessCheck(Records records, SandboxRuntime runtime, KillOperation kills) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.kills = requireNonNull(kills, "kills is null");
    }

    /** Asks every live instance (quick, one after another), removes the gone ones on {@code executor}, waits for them. */
    Round checkAll(ExecutorService executor) {
        Map<SandboxId, Outcome> outcomes = new HashMap<>();
        Map<SandboxId, Future<Outcome>> removals = new HashMap<>();
        List<SandboxRuntime.Handle> handles = runtime.all();
        Set<SandboxId> running = records.runningIds();
        Set<SandboxId> withInstance = new HashSet<>();
        for (SandboxRuntime.Handle handle : handles) {
            withInstance.add(handle.id());
            SandboxId id = handle.id();
            if (!running.contains(id)) {
                outcomes.put(id, Outcome.NOT_RUNNING);
                continue;
            }
            Optional<Liveness> answer;
            try {
                answer = handle.tryCall(SandboxBackend::liveness);
            } catch (BackendException | RuntimeException e) {
                log.atWarn()
                        .addKeyValue("sandbox_id", id.value())
                        .setCause(e)
                        .log("liveness check failed; counted as alive");
                outcomes.put(id, Outcome.FAILED);
                continue;
            }
            switch (answer.orElse(null)) {
                case null -> outcomes.put(id, Outcome.BUSY);
                case Liveness.Alive alive -> outcomes.put(id, Outcome.ALIVE);
                case Liveness.Gone gone -> removals.put(id, executor.submit(() -> remove(handle, gone.reason())));
            }
        }
        for (SandboxId id : running) {
            if (!withInstance.contains(id)) {
                removals.put(id, executor.submit(() -> removeWithoutInstance(id)));
            }
        }
        for (Map.Entry<SandboxId, Future<Outcome>> removal : removals.entrySet()) {
            outcomes.put(removal.getKey(), outcome(removal.getKey(), removal.getValue()));
        }
        return new Round(outcomes);
    }

    private Outcome remove(SandboxRuntime.Handle handle, String reason) {
        try {
            return kills.removeGone(handle, reason) ? Outcome.REMOVED : Outcome.NOT_RUNNING;
        } catch (AgentEnvException e) {
            if (e.kind() == ErrorKind.NOT_FOUND) {
                return Outcome.NOT_RUNNING;
            }
            log.atWarn()
                    .addKeyValue("sandbox_id", handle.id().value())
                    .setCause(e)
                    .log("removing a sandbox that is gone failed; retrying on the next round");
            return Outcome.FAILED;
        }
    }

    private Outcome removeWithoutInstance(SandboxId id) {
        try {
            return kills.removeWithoutInstance(id) ? Outcome.REMOVED : Outcome.NOT_RUNNING;
        } catch (RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e)
                    .log("removing a running record without an instance failed; retrying on the next round");
            return Outcome.FAILED;
        }
    }

    private static Outcome outcome(SandboxId id, Future<Outcome> removal) {
        try {
            return removal.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.FAILED;
        } catch (ExecutionException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e.getCause())
                    .log("removing a gone sandbox failed");
            return Outcome.FAILED;
        }
    }
}
