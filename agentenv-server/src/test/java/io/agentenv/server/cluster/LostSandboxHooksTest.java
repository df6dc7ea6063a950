package io.agentenv.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeId;
import io.agentenv.orchestrator.Hook;
import io.agentenv.orchestrator.HookException;
import io.agentenv.orchestrator.HookStart;
import io.agentenv.orchestrator.LifecycleHooks;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LostSandboxHooksTest {
    private static final String ID = "aaaaaaaaaaaaaaaaaaaa";

    /** Records stop calls; fails them when told to. */
    private static final class RecordingHooks implements LifecycleHooks {
        final List<String> stops = new CopyOnWriteArrayList<>();
        final boolean enabled;
        final boolean failing;

        RecordingHooks(boolean enabled, boolean failing) {
            this.enabled = enabled;
            this.failing = failing;
        }

        @Override
        public boolean enabled() {
            return enabled;
        }

        @Override
        public Optional<String> startFresh(HookStart start) {
            return Optional.empty();
        }

        @Override
        public void startResume(HookStart start) {}

        @Override
        public String patchParams(SandboxId sandboxId, String patch) {
            return patch;
        }

        @Override
        public void stop(SandboxId sandboxId, UUID instanceId) throws HookException {
            stops.add(sandboxId.value() + " " + instanceId);
            if (failing) {
                throw HookException.unreachable(Hook.STOP, new IOException("connection refused"));
            }
        }
    }

    private static LostSandbox lost(Optional<UUID> instance) {
        return new LostSandbox(ID, new NodeId("n2"), "base", "RUNNING", Map.of(), instance, "lease", Instant.EPOCH);
    }

    @Test
    void a_lost_sandbox_s_instance_gets_the_stop_hook() {
        UUID instance = UUID.randomUUID();
        RecordingHooks hooks = new RecordingHooks(true, false);
        new LostSandboxHooks(hooks).accept(lost(Optional.of(instance)));
        assertThat(hooks.stops).containsExactly(ID + " " + instance);
    }

    @Test
    void no_extension_or_no_instance_calls_nothing_and_a_failing_hook_is_logged() {
        RecordingHooks off = new RecordingHooks(false, false);
        new LostSandboxHooks(off).accept(lost(Optional.of(UUID.randomUUID())));
        RecordingHooks noInstance = new RecordingHooks(true, false);
        new LostSandboxHooks(noInstance).accept(lost(Optional.empty()));
        assertThat(off.stops).isEmpty();
        assertThat(noInstance.stops).isEmpty();

        RecordingHooks failing = new RecordingHooks(true, true);
        new LostSandboxHooks(failing).accept(lost(Optional.of(UUID.randomUUID())));
        assertThat(failing.stops).hasSize(1);
    }
}
