package io.agentenv.orchestrator;

import static io.agentenv.orchestrator.OrchestratorHarness.T0;
import static io.agentenv.orchestrator.OrchestratorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.mock.MockAction;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** TTL eviction driven by a fake clock through {@code evictExpired(now)}. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
@ExtendWith(OrchestratorExtension.class)
class OrchestratorTtlTest {
    OrchestratorHarness h;
    Orchestrator orchestrator;

    @BeforeEach
    void setUp(OrchestratorHarness harness) {
        h = harness;
        orchestrator = h.orchestrator;
    }

    private SandboxId create(Duration timeout, TimeoutAction action) {
        return orchestrator
                .create(new CreateSandbox(
                        "base",
                        timeout,
                        action,
                        PauseMode.WITH_MEMORY,
                        false,
                        Map.of(),
                        Map.of(),
                        NetworkPolicy.DEFAULT,
                        "{}",
                        true,
                        Optional.empty(),
                        List.of()))
                .id();
    }

    @Test
    void a_sandbox_is_left_alone_until_its_ttl_runs_out_and_then_killed() throws Exception {
        // given
        SandboxId id = create(Duration.ofSeconds(10), TimeoutAction.KILL);
        // when / then
        orchestrator.evictExpired(T0.plusSeconds(9));
        assertThat(h.state(id)).isEqualTo(SandboxState.RUNNING);
        orchestrator.evictExpired(T0.plusSeconds(10));
        assertThat(h.store.get(id)).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
        h.events.await(e -> e instanceof LifecycleEvent.TimedOut t && t.action() == TimeoutAction.KILL, WAIT);
    }

    @Test
    void on_timeout_pause_pauses_the_sandbox_and_it_stays_resumable() throws Exception {
        // given
        SandboxId id = create(Duration.ofSeconds(10), TimeoutAction.PAUSE);
        // when
        orchestrator.evictExpired(T0.plusSeconds(11));
        // then
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        h.events.await(e -> e instanceof LifecycleEvent.TimedOut t && t.action() == TimeoutAction.PAUSE, WAIT);
        assertThat(orchestrator.connect(id, Duration.ofSeconds(5)).outcome()).isEqualTo(ConnectResult.Outcome.RESUMED);
    }

    @Test
    void paused_sandboxes_never_expire() {
        // given
        SandboxId id = create(Duration.ofSeconds(10), TimeoutAction.KILL);
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        // when
        orchestrator.evictExpired(T0.plus(Duration.ofDays(365)));
        // then
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
    }

    @Test
    void a_refreshed_ttl_wins_over_the_old_deadline() {
        // given
        SandboxId id = create(Duration.ofSeconds(10), TimeoutAction.KILL);
        h.clock.advance(Duration.ofSeconds(8));
        orchestrator.refresh(id, Duration.ofSeconds(10));
        // when
        orchestrator.evictExpired(T0.plusSeconds(12));
        // then
        assertThat(h.state(id)).isEqualTo(SandboxState.RUNNING);
        orchestrator.evictExpired(T0.plusSeconds(18));
        assertThat(h.store.get(id)).isEmpty();
    }

    @Test
    void a_zero_timeout_expires_on_the_next_tick() {
        SandboxId id = create(Duration.ZERO, TimeoutAction.KILL);
        orchestrator.evictExpired(T0);
        assertThat(h.store.get(id)).isEmpty();
    }

    @Test
    void a_failed_timeout_pause_is_retried_on_the_next_tick() {
        // given
        SandboxId id = create(Duration.ofSeconds(1), TimeoutAction.PAUSE);
        h.backend.script(MockOp.PAUSE, MockAction.recoverable("busy"));
        // when
        orchestrator.evictExpired(T0.plusSeconds(2));
        assertThat(h.state(id)).isEqualTo(SandboxState.RUNNING);
        orchestrator.evictExpired(T0.plusSeconds(3));
        // then
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
    }

    @Test
    void only_expired_sandboxes_are_touched_in_a_tick() {
        // given
        SandboxId soon = create(Duration.ofSeconds(5), TimeoutAction.KILL);
        SandboxId later = create(Duration.ofSeconds(50), TimeoutAction.KILL);
        // when
        orchestrator.evictExpired(T0.plusSeconds(6));
        // then
        assertThat(h.store.get(soon)).isEmpty();
        assertThat(h.state(later)).isEqualTo(SandboxState.RUNNING);
    }
}
