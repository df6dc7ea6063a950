package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GET/PATCH of custom extension params. A patch needs a RUNNING sandbox; the extension's patch-params hook computes the
 * full new params from the user's body and is called with no lock held and no state owned (a patch is short and must
 * not block pause or kill). The answer is stored with one narrow conditional write (state still RUNNING), so a sandbox
 * paused, snapshotted, forked or killed meanwhile gives CONFLICT (NOT_FOUND once gone) and keeps its previous params.
 * Concurrent patches are not serialised: each stores exactly what its own hook call answered, and the last write wins.
 * Without a configured extension nothing is called and only an empty object is accepted.
 */
final class CustomExtensionParams {
    static final String EMPTY = "{}";
    private static final Logger log = LoggerFactory.getLogger(CustomExtensionParams.class);

    private final Records records;
    private final HookCalls hooks;

    CustomExtensionParams(Records records, HookCalls hooks) {
        this.records = requireNonNull(records, "records is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
    }

    static boolean isEmpty(String rawJsonObject) {
        return rawJsonObject.isBlank() || rawJsonObject.strip().equals(EMPTY);
    }

    static void requireEmptyWithoutExtension(String rawJsonObject) {
        requireNonNull(rawJsonObject, "rawJsonObject is null");
        if (!isEmpty(rawJsonObject)) {
            throw AgentEnvException.invalidArgument(
                    "customExtensionParams require a configured custom extension, and none is configured");
        }
    }

    String get(SandboxId id) {
        String stored = records.visible(id).customExtensionParams();
        return stored.isBlank() ? EMPTY : stored;
    }

    String patch(SandboxId id, String rawJsonObject) {
        SandboxRecord record = records.visible(id);
        if (record.state() != SandboxState.RUNNING) {
            throw AgentEnvException.invalidState(id, record.state(), "change custom extension params");
        }
        if (!hooks.enabled()) {
            requireEmptyWithoutExtension(rawJsonObject);
            return get(id);
        }
        String updated = hooks.patch(id, rawJsonObject);
        if (!records.updateCustomExtensionParams(id, SandboxState.RUNNING, updated)) {
            SandboxRecord now = records.visible(id);
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .addKeyValue("state", now.state())
                    .log("custom extension params not stored: the sandbox left RUNNING during the patch hook");
            throw new AgentEnvException(
                    ErrorKind.CONFLICT,
                    "sandbox " + id.value()
                            + " left the running state while its custom extension params were being patched (now "
                            + now.state().name().toLowerCase(Locale.ROOT) + "); the params were not changed");
        }
        log.atInfo().addKeyValue("sandbox_id", id.value()).log("custom extension params updated");
        return updated;
    }
}
