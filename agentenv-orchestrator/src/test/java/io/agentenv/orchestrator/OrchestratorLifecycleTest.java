package io.agentenv.orchestrator;

import static io.agentenv.orchestrator.OrchestratorHarness.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.MockOp;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
@ExtendWith(OrchestratorExtension.class)
class OrchestratorLifecycleTest {
    OrchestratorHarness h;
    Orchestrator orchestrator;

    @BeforeEach
    void setUp(OrchestratorHarness harness) {
        h = harness;
        orchestrator = h.orchestrator;
    }

    @Test
    void create_returns_a_running_sandbox_with_its_ttl_counted_from_now() {
        // given
        CreateSandbox request = new CreateSandbox(
                "base",
                Duration.ofSeconds(60),
                TimeoutAction.PAUSE,
                PauseMode.WITH_MEMORY,
                true,
                Map.of("FOO", "bar"),
                Map.of("owner", "me"),
                NetworkPolicy.DEFAULT,
                "{}",
                true,
                Optional.empty(),
                List.of());
        // when
        SandboxView view = orchestrator.create(request);
        // then
        assertThat(view.id().value()).matches("[a-z0-9]{20}");
        assertThat(view.state()).isEqualTo(SandboxState.RUNNING);
        assertThat(view.template().value()).isEqualTo("base");
        assertThat(view.startedAt()).isEqualTo(T0);
        assertThat(view.expiresAt()).contains(T0.plusSeconds(60));
        assertThat(view.metadata()).containsEntry("owner", "me");
        assertThat(view.onTimeout()).isEqualTo(TimeoutAction.PAUSE);
        assertThat(orchestrator.get(view.id())).isEqualTo(view);
        MockSandbox instance = h.backend.instance(view.id()).orElseThrow();
        assertThat(instance.status()).isEqualTo(MockSandbox.Status.RUNNING);
        assertThat(instance.spec().envVars()).containsEntry("FOO", "bar");
        assertThat(instance.spec().accessToken().value())
                .isEqualTo("token-" + view.id().value());
    }

    @Test
    void an_unknown_template_is_an_invalid_argument_and_starts_nothing() {
        assertThatThrownBy(() -> orchestrator.create(CreateSandbox.of("nope", Duration.ofSeconds(1))))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).isEqualTo("template nope not found");
                });
        assertThat(h.backend.count(MockOp.PREPARE)).isZero();
    }

    @Test
    void network_entries_that_are_not_addresses_or_cidr_blocks_are_rejected() {
        NetworkPolicy domains = new NetworkPolicy(
                NetworkPolicy.InternetAccess.DENIED,
                List.of("example.com"),
                List.of(),
                NetworkPolicy.PublicTraffic.ALLOWED);
        CreateSandbox request = new CreateSandbox(
                "base",
                Duration.ofSeconds(1),
                TimeoutAction.KILL,
                PauseMode.WITH_MEMORY,
                false,
                Map.of(),
                Map.of(),
                domains,
                "{}",
                false,
                Optional.empty(),
                List.of());
        assertThatThrownBy(() -> orchestrator.create(request))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        assertThat(NetworkRules.isAddressOrCidr("10.0.0.0/8")).isTrue();
        assertThat(NetworkRules.isAddressOrCidr("2001:db8::/32")).isTrue();
        assertThat(NetworkRules.isAddressOrCidr("1.2.3.4")).isTrue();
        assertThat(NetworkRules.isAddressOrCidr("10.0.0.0/33")).isFalse();
        assertThat(NetworkRules.isAddressOrCidr("localhost")).isFalse();
    }

    @Test
    void custom_extension_params_are_refused_while_no_extension_is_configured() {
        CreateSandbox request = new CreateSandbox(
                "base",
                Duration.ofSeconds(1),
                TimeoutAction.KILL,
                PauseMode.WITH_MEMORY,
                false,
                Map.of(),
                Map.of(),
                NetworkPolicy.DEFAULT,
                "{\"a\":1}",
                false,
                Optional.empty(),
                List.of());
        assertThatThrownBy(() -> orchestrator.create(request))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        SandboxId id = h.create();
        assertThat(orchestrator.customExtensionParams(id)).isEqualTo("{}");
        assertThat(orchestrator.patchCustomExtensionParams(id, "{}")).isEqualTo("{}");
        assertThatThrownBy(() -> orchestrator.patchCustomExtensionParams(id, "{\"a\":1}"))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
    }

    @Test
    void kill_removes_the_sandbox_and_a_second_kill_is_not_found() throws Exception {
        // given
        SandboxId id = h.create();
        // when
        orchestrator.kill(id);
        // then
        assertThat(h.store.get(id)).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
        assertThatThrownBy(() -> orchestrator.kill(id))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
        assertThatThrownBy(() -> orchestrator.get(id))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
        h.events.await(e -> e instanceof LifecycleEvent.Killed k && k.sandbox().equals(id), OrchestratorHarness.WAIT);
    }

    @Test
    void pausing_twice_pauses_once_then_reports_already_paused() {
        // given
        SandboxId id = h.create();
        // when
        PauseOutcome first = orchestrator.pause(id, PauseMode.WITH_MEMORY);
        PauseOutcome second = orchestrator.pause(id, PauseMode.WITH_MEMORY);
        // then
        assertThat(first).isEqualTo(PauseOutcome.PAUSED);
        assertThat(second).isEqualTo(PauseOutcome.ALREADY_PAUSED);
        SandboxView view = orchestrator.get(id);
        assertThat(view.state()).isEqualTo(SandboxState.PAUSED);
        assertThat(view.expiresAt()).isEmpty();
        assertThat(h.backend.count(MockOp.PAUSE)).isEqualTo(1);
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(h.store.get(id).orElseThrow().paused()).isPresent();
    }

    @Test
    void connect_resumes_a_paused_sandbox_with_a_fresh_ttl_and_frees_its_paused_artifacts() {
        // given
        SandboxId id = h.create();
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        Path artifacts = h.store.get(id).orElseThrow().paused().orElseThrow().artifactDir();
        h.clock.advance(Duration.ofSeconds(100));
        // when
        ConnectResult result = orchestrator.connect(id, Duration.ofSeconds(30));
        // then
        assertThat(result.outcome()).isEqualTo(ConnectResult.Outcome.RESUMED);
        assertThat(result.view().state()).isEqualTo(SandboxState.RUNNING);
        assertThat(result.view().expiresAt()).contains(T0.plusSeconds(130));
        assertThat(h.backend.instance(id).orElseThrow().source()).isInstanceOf(LaunchSource.Paused.class);
        assertThat(h.store.get(id).orElseThrow().paused()).isEmpty();
        assertThat(Files.exists(artifacts)).isFalse();
    }

    @Test
    void connect_to_a_running_sandbox_only_extends_its_ttl() {
        // given
        SandboxId id = h.create(); // expires at T0 + 300 s
        // when
        ConnectResult shorter = orchestrator.connect(id, Duration.ofSeconds(10));
        ConnectResult longer = orchestrator.connect(id, Duration.ofSeconds(600));
        // then
        assertThat(shorter.outcome()).isEqualTo(ConnectResult.Outcome.ALREADY_RUNNING);
        assertThat(shorter.view().expiresAt()).contains(T0.plusSeconds(300));
        assertThat(longer.view().expiresAt()).contains(T0.plusSeconds(600));
    }

    @Test
    void set_timeout_overwrites_the_ttl_and_may_shorten_it_while_refresh_only_extends() {
        // given
        SandboxId id = h.create();
        // when / then
        orchestrator.setTimeout(id, Duration.ofSeconds(5));
        assertThat(orchestrator.get(id).expiresAt()).contains(T0.plusSeconds(5));
        orchestrator.refresh(id, Duration.ofSeconds(1));
        assertThat(orchestrator.get(id).expiresAt()).contains(T0.plusSeconds(5));
        orchestrator.refresh(id, Duration.ofSeconds(50));
        assertThat(orchestrator.get(id).expiresAt()).contains(T0.plusSeconds(50));
    }

    @Test
    void the_deprecated_resume_sets_the_ttl_of_a_running_sandbox() {
        SandboxId id = h.create();
        SandboxView view = orchestrator.resume(id, Duration.ofSeconds(7));
        assertThat(view.expiresAt()).contains(T0.plusSeconds(7));
        orchestrator.pause(id, PauseMode.FILESYSTEM_ONLY);
        assertThat(orchestrator.resume(id, Duration.ofSeconds(9)).state()).isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void list_filters_by_state_and_metadata_and_never_shows_killed_sandboxes() {
        // given
        SandboxId running = orchestrator
                .create(new CreateSandbox(
                        "base",
                        Duration.ofSeconds(60),
                        TimeoutAction.KILL,
                        PauseMode.WITH_MEMORY,
                        false,
                        Map.of(),
                        Map.of("team", "a"),
                        NetworkPolicy.DEFAULT,
                        "{}",
                        true,
                        Optional.empty(),
                        List.of()))
                .id();
        SandboxId paused = orchestrator
                .create(new CreateSandbox(
                        "base",
                        Duration.ofSeconds(60),
                        TimeoutAction.KILL,
                        PauseMode.WITH_MEMORY,
                        false,
                        Map.of(),
                        Map.of("team", "a"),
                        NetworkPolicy.DEFAULT,
                        "{}",
                        true,
                        Optional.empty(),
                        List.of()))
                .id();
        SandboxId killed = h.create();
        orchestrator.pause(paused, PauseMode.WITH_MEMORY);
        orchestrator.kill(killed);
        // when
        Page<SandboxView> all = orchestrator.list(SandboxQuery.all(100));
        Page<SandboxView> runningTeamA = orchestrator.list(new SandboxQuery(
                EnumSet.of(SandboxState.RUNNING),
                Map.of("team", "a"),
                Optional.empty(),
                Optional.empty(),
                SortOrder.DESC,
                100,
                Optional.empty()));
        // then
        assertThat(all.items()).extracting(SandboxView::id).containsExactlyInAnyOrder(running, paused);
        assertThat(runningTeamA.items()).extracting(SandboxView::id).containsExactly(running);
    }

    @Test
    void a_snapshot_can_be_created_from_by_name_and_deleted_from_the_catalog() {
        // given
        SandboxId source = orchestrator
                .create(new CreateSandbox(
                        "base",
                        Duration.ofSeconds(60),
                        TimeoutAction.KILL,
                        PauseMode.WITH_MEMORY,
                        false,
                        Map.of("FROM", "source"),
                        Map.of(),
                        NetworkPolicy.DEFAULT,
                        "{}",
                        true,
                        Optional.empty(),
                        List.of()))
                .id();
        // when
        SnapshotView snapshot = orchestrator.snapshot(source, Optional.of("my-snap"));
        SandboxView child = orchestrator.create(CreateSandbox.of("my-snap", Duration.ofSeconds(60)));
        // then
        assertThat(orchestrator.get(source).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(snapshot.names()).containsExactly("my-snap");
        assertThat(snapshot.sourceSandbox()).contains(source);
        assertThat(child.template()).isEqualTo(snapshot.id());
        assertThat(child.alias()).contains("my-snap");
        assertThat(h.backend.instance(child.id()).orElseThrow().source()).isInstanceOf(LaunchSource.Snapshot.class);
        assertThat(h.backend.instance(child.id()).orElseThrow().spec().envVars())
                .containsEntry("FROM", "source");
        assertThat(orchestrator
                        .listSnapshots(new SnapshotQuery(Optional.of(source), Optional.empty(), 10, Optional.empty()))
                        .items())
                .containsExactly(snapshot);
        assertThat(orchestrator.deleteTemplate("my-snap")).isTrue();
        assertThat(orchestrator.deleteTemplate(snapshot.id().value())).isFalse();
        assertThatThrownBy(() -> orchestrator.create(CreateSandbox.of("my-snap", Duration.ofSeconds(60))))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        assertThat(orchestrator.get(child.id()).state()).isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void bad_snapshot_names_and_the_built_in_template_are_refused() {
        SandboxId id = h.create();
        assertThatThrownBy(() -> orchestrator.snapshot(id, Optional.of("a b")))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        assertThatThrownBy(() -> orchestrator.deleteTemplate("base"))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
    }

    @Test
    void fork_starts_children_inheriting_settings_with_new_ids_leaving_the_source_running() {
        // given
        SandboxId source = orchestrator
                .create(new CreateSandbox(
                        "base",
                        Duration.ofSeconds(60),
                        TimeoutAction.PAUSE,
                        PauseMode.WITH_MEMORY,
                        false,
                        Map.of(),
                        Map.of("m", "1"),
                        NetworkPolicy.DEFAULT,
                        "{}",
                        true,
                        Optional.empty(),
                        List.of()))
                .id();
        h.clock.advance(Duration.ofSeconds(10));
        // when
        List<ForkResult> results = orchestrator.fork(source, 3, Optional.empty());
        // then
        assertThat(results).hasSize(3).allSatisfy(r -> assertThat(r).isInstanceOf(ForkResult.Child.class));
        List<SandboxView> children =
                results.stream().map(r -> ((ForkResult.Child) r).sandbox()).toList();
        assertThat(children).extracting(SandboxView::id).doesNotHaveDuplicates().doesNotContain(source);
        assertThat(children).allSatisfy(child -> {
            assertThat(child.state()).isEqualTo(SandboxState.RUNNING);
            assertThat(child.metadata()).containsEntry("m", "1");
            assertThat(child.startedAt()).isEqualTo(T0.plusSeconds(10));
            assertThat(child.expiresAt()).contains(T0.plusSeconds(70));
        });
        assertThat(orchestrator.get(source).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(orchestrator.get(source).expiresAt()).contains(T0.plusSeconds(60));
        assertThat(h.backend.count(MockOp.SNAPSHOT)).isEqualTo(1);
        assertThat(h.artifactRoot().resolve("forks")).isEmptyDirectory();
    }

    @Test
    void fork_counts_outside_one_to_a_hundred_are_invalid() {
        SandboxId id = h.create();
        assertThatThrownBy(() -> orchestrator.fork(id, 0, Optional.empty()))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        assertThatThrownBy(() -> orchestrator.fork(id, 101, Optional.empty()))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
    }

    @Test
    void a_network_update_reaches_the_backend_and_is_stored() {
        // given
        SandboxId id = h.create();
        NetworkPolicy policy = new NetworkPolicy(
                NetworkPolicy.InternetAccess.DENIED,
                List.of("10.1.0.0/16"),
                List.of(),
                NetworkPolicy.PublicTraffic.TOKEN_REQUIRED);
        // when
        orchestrator.updateNetwork(id, policy);
        // then
        assertThat(h.backend.instance(id).orElseThrow().network()).isEqualTo(policy);
        assertThat(orchestrator.get(id).network()).isEqualTo(policy);
    }

    @Test
    void the_guest_endpoint_is_known_only_while_running() {
        // given
        h.backend.guestEndpoint(new GuestEndpoint("10.11.0.2", 49983, Optional.empty()));
        SandboxId id = h.create();
        // when / then
        assertThat(orchestrator.guestEndpoint(id)).contains(new GuestEndpoint("10.11.0.2", 49983, Optional.empty()));
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        assertThat(orchestrator.guestEndpoint(id)).isEmpty();
        orchestrator.kill(id);
        assertThatThrownBy(() -> orchestrator.guestEndpoint(id))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
    }

    @Test
    void lifecycle_events_are_published_for_every_change() throws Exception {
        // given
        SandboxId id = h.create();
        // when
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        orchestrator.connect(id, Duration.ofSeconds(5));
        orchestrator.snapshot(id, Optional.empty());
        orchestrator.fork(id, 1, Optional.empty());
        orchestrator.kill(id);
        // then
        h.events.await(e -> e instanceof LifecycleEvent.Killed k && k.sandbox().equals(id), OrchestratorHarness.WAIT);
        assertThat(h.events.events())
                .extracting(e -> e.getClass().getSimpleName())
                .containsSubsequence("Created", "Paused", "Resumed", "SnapshotTaken", "Forked", "Killed");
    }
}
