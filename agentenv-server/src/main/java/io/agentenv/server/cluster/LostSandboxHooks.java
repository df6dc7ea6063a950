package io.agentenv.server.cluster;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.LostSandbox;
import io.agentenv.orchestrator.HookException;
import io.agentenv.orchestrator.LifecycleHooks;
import io.agentenv.spi.SandboxId;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the custom extension that a sandbox lost with its node has stopped: its stop hook, with the instance id the
 * extension knew, as for a kill. A failing hook is logged; the sandbox is gone either way.
 */
final class LostSandboxHooks implements Consumer<LostSandbox> {
    private static final Logger log = LoggerFactory.getLogger(LostSandboxHooks.class);

    private final LifecycleHooks hooks;

    LostSandboxHooks(LifecycleHooks hooks) {
        this.hooks = requireNonNull(hooks, "hooks is null");
    }

    @Override
    public void accept(LostSandbox lost) {
        if (!hooks.enabled() || lost.instanceId().isEmpty()) {
            return;
        }
        try {
            hooks.stop(new SandboxId(lost.sandboxId()), lost.instanceId().get());
        } catch (HookException e) {
            log.atWarn()
                    .setCause(e)
                    .addKeyValue("sandbox_id", lost.sandboxId())
                    .log("cluster: the stop hook of a lost sandbox failed");
        }
    }
}
