package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import java.nio.file.Path;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Captures a running sandbox for fork and snapshot: CAS RUNNING to {@code holding}, snapshot into {@code dir}, and
 * back to RUNNING. Recoverable failures leave the sandbox RUNNING; terminal ones remove it.
 */
final class Captures {
    private static final Logger log = LoggerFactory.getLogger(Captures.class);

    private final Records records;
    private final SandboxRuntime runtime;
    private final Artifacts artifacts;
    private final Disposal disposal;

    Captures(Records records, SandboxRuntime runtime, Artifacts artifacts, Disposal disposal) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
        this.disposal = requireNonNull(disposal, "disposal is null");
    }

    /** CAS RUNNING to {@code holding}; NOT_FOUND when gone or killing, CONFLICT in any other state. */
    SandboxRecord acquire(SandboxId id, SandboxState holding, String operation) {
        while (!records.cas(id, SandboxState.RUNNING, holding)) {
            SandboxRecord record = records.visible(id);
            if (record.state() != SandboxState.RUNNING) {
                throw AgentEnvException.invalidState(id, record.state(), operation);
            }
        }
        return records.get(id).orElseThrow(() -> AgentEnvException.notFound(id));
    }

    /** Captures while {@code holding} is owned; on any failure the state is resolved before this throws. */
    SnapshotState capture(SandboxId id, SandboxState holding, Path dir) {
        Optional<SandboxRuntime.Handle> handle = runtime.get(id);
        if (handle.isEmpty()) {
            artifacts.delete(dir);
            records.cas(id, holding, SandboxState.RUNNING);
            throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " has no live instance to capture");
        }
        try {
            return handle.get().call(backend -> backend.snapshot(dir));
        } catch (BackendException.Recoverable e) {
            artifacts.delete(dir);
            records.cas(id, holding, SandboxState.RUNNING);
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("capture failed; sandbox still running");
            throw new AgentEnvException(ErrorKind.INTERNAL, "capturing sandbox " + id + " failed", e);
        } catch (BackendException | RuntimeException e) {
            artifacts.delete(dir);
            disposal.discard(id, handle, "capture failed terminally", e);
            throw new AgentEnvException(
                    ErrorKind.INTERNAL, "capturing sandbox " + id + " failed and the sandbox was lost", e);
        }
    }

    void release(SandboxId id, SandboxState holding) {
        if (!records.cas(id, holding, SandboxState.RUNNING)) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " left " + holding + " unexpectedly");
        }
    }
}
