package io.agentenv.orchestrator;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * Captures a running sandbox for fork and snapshot: CAS RUNNING to {@code holding}, snapshot into {@code dir}, and
 * back to RUNNING. Recoverable failures leave the sandbox RUNNING; terminal ones remove it.
 */
final class Captures {
    private static final Logger log = LoggerFactory.getLogger(Captures.class);

    private final OperationContext ctx;

    Captures(OperationContext ctx) {
        this.ctx = requireNonNull(ctx, "ctx is null");
    }

    /** CAS RUNNING to {@code holding}; NOT_FOUND when gone or killing, CONFLICT in any other state. */
    SandboxRecord acquire(SandboxId id, SandboxState holding, String operation) {
        while (!ctx.records.cas(id, SandboxState.RUNNING, holding)) {
            SandboxRecord record = ctx.records.visible(id);
            if (record.state() != SandboxState.RUNNING) {
                throw AgentEnvException.invalidState(id, record.state(), operation);
            }
        }
        return ctx.records.get(id).orElseThrow(() -> AgentEnvException.notFound(id));
    }

    /** Captures while {@code holding} is owned; on any failure the state is resolved before this throws. */
    SnapshotState capture(SandboxId id, SandboxState holding, Path dir) {
        Optional<SandboxRuntime.Handle> handle = ctx.runtime.get(id);
        if (handle.isEmpty()) {
            ctx.artifacts.delete(dir);
            ctx.records.cas(id, holding, SandboxState.RUNNING);
            throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " has no live instance to capture");
        }
        try {
            return handle.get().call(backend -> backend.snapshot(dir));
        } catch (BackendException.Recoverable e) {
            ctx.artifacts.delete(dir);
            ctx.records.cas(id, holding, SandboxState.RUNNING);
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("capture failed; sandbox still running");
            throw new AgentEnvException(ErrorKind.INTERNAL, "capturing sandbox " + id + " failed", e);
        } catch (BackendException | RuntimeException e) {
            ctx.artifacts.delete(dir);
            ctx.discard(id, handle, "capture failed terminally", e);
            throw new AgentEnvException(ErrorKind.INTERNAL, "capturing sandbox " + id + " failed and the sandbox was lost", e);
        }
    }

    void release(SandboxId id, SandboxState holding) {
        if (!ctx.records.cas(id, holding, SandboxState.RUNNING)) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " left " + holding + " unexpectedly");
        }
    }
}
