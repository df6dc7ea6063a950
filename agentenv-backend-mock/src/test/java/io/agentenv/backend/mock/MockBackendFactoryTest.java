package io.agentenv.backend.mock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateId;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class MockBackendFactoryTest {
    private static final Duration READY = Duration.ofSeconds(5);
    private final MockBackendFactory factory = new MockBackendFactory();

    @TempDir
    Path dir;

    @Test
    void the_service_loader_finds_it_under_the_name_mock() {
        assertThat(ServiceLoader.load(SandboxBackendFactory.class).stream()
                        .map(ServiceLoader.Provider::get)
                        .map(SandboxBackendFactory::name))
                .contains("mock");
    }

    @Test
    void an_unscripted_lifecycle_succeeds_and_round_trips_its_paused_state() throws Exception {
        // given
        SandboxBackend sandbox = factory.prepare(spec(), new LaunchSource.Template(new TemplateId("base")));
        sandbox.start(READY);
        // when
        PausedState paused = sandbox.pause(PauseMode.WITH_MEMORY, dir.resolve("p"));
        PausedState decoded = factory.decodePausedState(paused.encode(), dir.resolve("p"));
        // then
        assertThat(decoded).isEqualTo(paused);
        assertThat(decoded.resources()).isEqualTo(MockBackendFactory.BASE_RESOURCES);
        assertThat(((MockSandbox) sandbox).status()).isEqualTo(MockSandbox.Status.STOPPED);
        assertThat(factory.count(MockOp.PAUSE)).isEqualTo(1);
    }

    @Test
    void a_prepared_instance_has_its_own_fake_network_and_takes_boot_args_before_start() throws Exception {
        // given
        SandboxBackend first = factory.prepare(spec(), new LaunchSource.Template(new TemplateId("base")));
        SandboxBackend second = factory.prepare(spec(), new LaunchSource.Template(new TemplateId("base")));
        // when
        first.extraBootArgs("vpn=1");
        first.start(READY);
        // then
        assertThat(first.hostNetwork()).isPresent();
        assertThat(first.hostNetwork().orElseThrow().namespacePath().toString())
                .startsWith("/var/run/netns/aenv-mock-");
        assertThat(second.hostNetwork()).isPresent().isNotEqualTo(first.hostNetwork());
        assertThat(((MockSandbox) first).bootArgs()).contains("vpn=1");
        assertThatThrownBy(() -> first.extraBootArgs("late")).isInstanceOf(BackendException.class);
        assertThat(((MockSandbox) second).bootArgs()).isEmpty();
    }

    @Test
    void a_scripted_recoverable_failure_leaves_the_instance_running() throws Exception {
        // given
        SandboxBackend sandbox = started();
        factory.script(MockOp.SNAPSHOT, MockAction.recoverable("disk full"));
        // when / then
        assertThatThrownBy(() -> sandbox.snapshot(dir.resolve("s"))).isInstanceOf(BackendException.Recoverable.class);
        assertThat(((MockSandbox) sandbox).status()).isEqualTo(MockSandbox.Status.RUNNING);
        SnapshotState snapshot = sandbox.snapshot(dir.resolve("s"));
        assertThat(factory.decodeSnapshotState(snapshot.encode(), dir.resolve("s")))
                .isEqualTo(snapshot);
    }

    @Test
    void a_scripted_terminal_failure_breaks_the_instance_until_it_is_closed() throws Exception {
        // given
        SandboxBackend sandbox = started();
        factory.script(MockOp.PAUSE, MockAction.terminal("criu crashed"));
        // when
        assertThatThrownBy(() -> sandbox.pause(PauseMode.WITH_MEMORY, dir))
                .isInstanceOf(BackendException.Terminal.class);
        // then
        assertThat(factory.openInstances()).hasSize(1);
        sandbox.close();
        assertThat(factory.openInstances()).isEmpty();
    }

    @Test
    void a_held_call_waits_at_its_gate_until_released() throws Exception {
        // given
        SandboxBackend sandbox = started();
        Gate gate = factory.holdNext(MockOp.FREEZE);
        // when
        CompletableFuture<Void> freeze = CompletableFuture.runAsync(() -> {
            try {
                sandbox.freeze();
            } catch (BackendException e) {
                throw new IllegalStateException(e);
            }
        });
        gate.awaitEntered(READY);
        // then
        assertThat(freeze).isNotDone();
        gate.release();
        freeze.get(5, TimeUnit.SECONDS);
        assertThat(((MockSandbox) sandbox).status()).isEqualTo(MockSandbox.Status.FROZEN);
    }

    @Test
    void a_call_made_while_holding_a_forbidden_lock_is_recorded_and_refused() throws Exception {
        // given
        SandboxBackend sandbox = started();
        Object lock = new Object();
        factory.forbidLock(lock);
        // when
        synchronized (lock) {
            assertThatThrownBy(sandbox::thaw).isInstanceOf(IllegalStateException.class);
        }
        // then
        assertThat(factory.violations()).hasSize(1);
    }

    @Test
    void a_running_instance_can_be_reattached_until_the_host_loses_it() throws Exception {
        // given
        MockSandbox sandbox = (MockSandbox) started();
        // when / then
        assertThat(factory.reattach(sandbox.spec())).containsSame(sandbox);
        factory.loseAllInstances();
        assertThat(factory.reattach(sandbox.spec())).isEmpty();
    }

    @Test
    void decoding_fails_terminally_when_the_artifacts_are_gone() {
        assertThatThrownBy(() -> factory.decodePausedState(
                        "paused|WITH_MEMORY|1|1|1|x".getBytes(StandardCharsets.UTF_8), dir.resolve("none")))
                .isInstanceOf(BackendException.Terminal.class);
    }

    private SandboxBackend started() throws BackendException {
        SandboxBackend sandbox = factory.prepare(spec(), new LaunchSource.Template(new TemplateId("base")));
        sandbox.start(READY);
        return sandbox;
    }

    private static LaunchSpec spec() {
        return new LaunchSpec(
                SandboxId.random(new SecureRandom()),
                new TemplateId("base"),
                Map.of("A", "b"),
                "user",
                new AccessToken("t"),
                NetworkPolicy.DEFAULT);
    }
}
