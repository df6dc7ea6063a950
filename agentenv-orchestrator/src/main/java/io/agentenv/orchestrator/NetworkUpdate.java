package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxId;
import java.util.EnumSet;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PUT /sandboxes/{id}/network: validate, have the backend enforce it, then store it. Runs inside the instance's call
 * serialisation so it never overlaps a pause or capture; the write is accepted in any state that still has the same
 * live instance, and a pause or capture that follows re-reads the record.
 */
final class NetworkUpdate {
    private static final Logger log = LoggerFactory.getLogger(NetworkUpdate.class);
    private static final EnumSet<SandboxState> LIVE =
            EnumSet.of(SandboxState.RUNNING, SandboxState.PAUSING, SandboxState.SNAPSHOTTING, SandboxState.FORKING);

    private final Records records;
    private final SandboxRuntime runtime;
    private final Disposal disposal;

    NetworkUpdate(Records records, SandboxRuntime runtime, Disposal disposal) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.disposal = requireNonNull(disposal, "disposal is null");
    }

    void update(SandboxId id, NetworkPolicy policy) {
        NetworkRules.validate(policy);
        SandboxRecord record = records.visible(id);
        if (record.state() != SandboxState.RUNNING) {
            throw AgentEnvException.invalidState(id, record.state(), "change its network");
        }
        Optional<SandboxRuntime.Handle> handle = runtime.get(id);
        if (handle.isEmpty()) {
            throw AgentEnvException.invalidState(id, record.state(), "change its network");
        }
        try {
            handle.get().call(backend -> {
                SandboxState now = records.visible(id).state();
                if (now != SandboxState.RUNNING) {
                    throw AgentEnvException.invalidState(id, now, "change its network");
                }
                backend.updateNetwork(policy);
                if (!records.updateNetwork(id, LIVE, policy)) {
                    throw AgentEnvException.notFound(id);
                }
                return null;
            });
        } catch (BackendException.Recoverable e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e)
                    .log("network update refused; old policy stays");
            throw new AgentEnvException(ErrorKind.INTERNAL, "updating the network of sandbox " + id + " failed", e);
        } catch (BackendException e) {
            if (records.cas(id, SandboxState.RUNNING, SandboxState.KILLING)) {
                disposal.discard(id, handle, "network update failed terminally", e);
            }
            throw new AgentEnvException(
                    ErrorKind.INTERNAL,
                    "updating the network of sandbox " + id + " failed and the sandbox was lost",
                    e);
        }
        log.atInfo().addKeyValue("sandbox_id", id.value()).log("network policy updated");
    }
}
