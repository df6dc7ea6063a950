package io.agentenv.orchestrator;

import static io.agentenv.server.extension.FakeExtensionServer.reply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.MockOp;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.server.extension.FakeExtensionServer;
import io.agentenv.server.extension.FakeExtensionServer.Call;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.HostNetwork;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The orchestrator's lifecycle hooks against a real HTTP extension (in-process), over the mock backend. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CustomExtensionHooksTest {
    private static final Duration WAIT = OrchestratorHarness.WAIT;
    private static final Duration HOOK_TIMEOUT =
            Duration.ofSeconds(2); // 500 ms failed once at load ~15: only the two hangs wait for it

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();
    private FakeExtensionServer extension;
    private OrchestratorHarness h;

    private final List<String> lockViolations = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        extension = FakeExtensionServer.start();
        h = new OrchestratorHarness(dir, new LockCheckingHooks(extension.hooks(http, HOOK_TIMEOUT)));
    }

    @AfterEach
    void stop() {
        try {
            h.close();
            assertThat(lockViolations)
                    .as("hooks called while holding an orchestrator monitor")
                    .isEmpty();
        } finally {
            extension.close();
            http.shutdownNow();
        }
    }

    /** Records a violation whenever a hook is called while the calling thread holds an orchestrator monitor. */
    private final class LockCheckingHooks implements LifecycleHooks {
        private final LifecycleHooks delegate;

        LockCheckingHooks(LifecycleHooks delegate) {
            this.delegate = delegate;
        }

        private void check(String hook) {
            for (Object monitor : h.orchestrator.internalMonitors()) {
                if (Thread.holdsLock(monitor)) {
                    lockViolations.add(hook);
                }
            }
        }

        @Override
        public boolean enabled() {
            return delegate.enabled();
        }

        @Override
        public Optional<String> startFresh(HookStart start) throws HookException {
            check("start-fresh");
            return delegate.startFresh(start);
        }

        @Override
        public void startResume(HookStart start) throws HookException {
            check("start-resume");
            delegate.startResume(start);
        }

        @Override
        public String patchParams(SandboxId sandboxId, String patch) throws HookException {
            check("patch-params");
            return delegate.patchParams(sandboxId, patch);
        }

        @Override
        public void stop(SandboxId sandboxId, UUID instanceId) throws HookException {
            check("stop");
            delegate.stop(sandboxId, instanceId);
        }
    }

    private static CreateSandbox request(String template, String params) {
        return new CreateSandbox(
                template,
                Duration.ofSeconds(300),
                TimeoutAction.KILL,
                PauseMode.WITH_MEMORY,
                false,
                Map.of(),
                Map.of(),
                NetworkPolicy.DEFAULT,
                params,
                true,
                Optional.empty(),
                List.of());
    }

    private SandboxId create(String params) {
        return h.orchestrator.create(request("base", params)).id();
    }

    private UUID recordedInstance(SandboxId id) {
        return h.store.get(id).orElseThrow().instanceId().orElseThrow();
    }

    private static UUID instanceOf(Call call) {
        return UUID.fromString(call.text("sandboxInstanceId"));
    }

    private void assertRolledBack(Call start) {
        assertThat(h.store.all()).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
        List<Call> stops = extension.calls(Hook.STOP);
        assertThat(stops).hasSize(1);
        assertThat(instanceOf(stops.getFirst())).isEqualTo(instanceOf(start));
        assertThat(stops.getFirst().text("sandboxId")).isEqualTo(start.text("sandboxId"));
    }

    // ---- start-fresh -------------------------------------------------------------------------------------------

    @Test
    void a_fresh_create_sends_start_fresh_with_the_recorded_instance_network_and_params() {
        SandboxId id = create("{\"vpn\":{\"region\":\"eu\"}}");

        Call call = extension.calls(Hook.START_FRESH).getFirst();
        HostNetwork network = h.backend.instance(id).orElseThrow().hostNetwork().orElseThrow();
        assertThat(call.text("sandboxId")).isEqualTo(id.value());
        assertThat(instanceOf(call)).isEqualTo(recordedInstance(id));
        assertThat(instanceOf(call).version()).isEqualTo(7);
        assertThat(call.text("networkNamespacePath"))
                .isEqualTo(network.namespacePath().toString());
        assertThat(call.text("hostInteractionIp"))
                .isEqualTo(network.hostInteractionIp().getHostAddress());
        assertThat(call.body().get("customExtensionParams").toString()).isEqualTo("{\"vpn\":{\"region\":\"eu\"}}");
        assertThat(extension.calls(Hook.START_RESUME)).isEmpty();
        assertThat(h.orchestrator.customExtensionParams(id)).isEqualTo("{\"vpn\":{\"region\":\"eu\"}}");
    }

    @Test
    void start_fresh_is_sent_after_prepare_and_its_boot_args_reach_the_backend_first() {
        extension.script(Hook.START_FRESH, reply(200, "{\"extraBootArgs\":\"vpn.tun=1 quiet\"}"));

        SandboxId id = create("{}");

        MockSandbox instance = h.backend.instance(id).orElseThrow();
        assertThat(instance.bootArgs()).contains("vpn.tun=1 quiet");
        assertThat(instance.status()).isEqualTo(MockSandbox.Status.RUNNING);
    }

    @Test
    void a_start_fresh_refusal_is_invalid_argument_naming_hook_status_body_and_rolls_back() {
        extension.script(Hook.START_FRESH, reply(422, "{\"error\":\"unknown vpn region mars\"}"));

        assertThatThrownBy(() -> create("{\"vpn\":\"mars\"}")).isInstanceOfSatisfying(AgentEnvException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains("start-fresh", "HTTP 422", "unknown vpn region mars");
        });

        assertRolledBack(extension.calls(Hook.START_FRESH).getFirst());
        assertThat(h.backend.count(MockOp.START)).isZero();
    }

    static Stream<Arguments> extensionFailures() {
        return Stream.of(
                Arguments.of(reply(500, "db down"), "start-fresh failed: HTTP 500: db down"),
                Arguments.of(reply(503, ""), "start-fresh failed: HTTP 503 (empty body)"),
                Arguments.of(new FakeExtensionServer.Hang(), "start-fresh did not answer within 2000 ms"),
                Arguments.of(new FakeExtensionServer.Drop(), "start-fresh could not be reached"),
                Arguments.of(reply(200, "not json"), "start-fresh answered HTTP 200 with an unusable body"));
    }

    @ParameterizedTest
    @MethodSource("extensionFailures")
    void an_extension_failing_start_fresh_is_upstream_failed_and_rolls_everything_back(
            FakeExtensionServer.Answer answer, String message) {
        extension.script(Hook.START_FRESH, answer);

        assertThatThrownBy(() -> create("{}")).isInstanceOfSatisfying(AgentEnvException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED);
            assertThat(e.getMessage()).contains(message).doesNotContain("127.0.0.1");
        });

        assertRolledBack(extension.calls(Hook.START_FRESH).getFirst());
    }

    @Test
    void a_backend_start_failure_after_the_hook_still_sends_stop_for_that_instance() {
        h.backend.failNext(MockOp.START, new BackendException.Terminal("boom"));

        assertThatThrownBy(() -> create("{}"))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INTERNAL));

        assertRolledBack(extension.calls(Hook.START_FRESH).getFirst());
    }

    // ---- pause, resume, kill -----------------------------------------------------------------------------------

    @Test
    void pause_stops_the_instance_resume_starts_one_with_the_same_params_new_network() {
        SandboxId id = create("{\"fw\":[22]}");
        UUID first = recordedInstance(id);
        String firstIp = extension.calls(Hook.START_FRESH).getFirst().text("hostInteractionIp");

        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        assertThat(extension.calls(Hook.STOP))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .containsExactly(first);

        ConnectResult resumed = h.orchestrator.connect(id, Duration.ofSeconds(60));
        assertThat(resumed.outcome()).isEqualTo(ConnectResult.Outcome.RESUMED);
        Call resume = extension.calls(Hook.START_RESUME).getFirst();
        UUID second = instanceOf(resume);
        assertThat(second).isNotEqualTo(first).isEqualTo(recordedInstance(id));
        assertThat(resume.body().get("customExtensionParams").toString()).isEqualTo("{\"fw\":[22]}");
        assertThat(resume.text("hostInteractionIp")).isNotEqualTo(firstIp);
        assertThat(extension.calls(Hook.START_FRESH)).hasSize(1);

        h.orchestrator.kill(id);
        assertThat(extension.calls(Hook.STOP))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .containsExactly(first, second);
    }

    @Test
    void killing_a_paused_sandbox_sends_no_second_stop() {
        SandboxId id = create("{}");
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);

        h.orchestrator.kill(id);

        assertThat(extension.calls(Hook.STOP)).hasSize(1);
    }

    @Test
    void a_connect_whose_start_resume_is_rejected_is_invalid_argument_and_stays_paused() {
        SandboxId id = create("{}");
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        extension.script(Hook.START_RESUME, reply(403, "resume not allowed"));

        assertThatThrownBy(() -> h.orchestrator.connect(id, Duration.ofSeconds(60)))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("start-resume", "HTTP 403", "resume not allowed");
                });

        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        assertThat(h.store.get(id).orElseThrow().paused()).isPresent();
        assertThat(h.backend.openInstances()).isEmpty();
        UUID failed = instanceOf(extension.calls(Hook.START_RESUME).getFirst());
        assertThat(extension.calls(Hook.STOP))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .last()
                .isEqualTo(failed);
        assertThat(h.orchestrator.connect(id, Duration.ofSeconds(60)).outcome())
                .isEqualTo(ConnectResult.Outcome.RESUMED);
    }

    @Test
    void the_deprecated_resume_route_reports_a_rejected_start_resume_as_conflict() {
        SandboxId id = create("{}");
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        extension.script(Hook.START_RESUME, reply(409, "tunnel busy"));

        assertThatThrownBy(() -> h.orchestrator.resume(id, Duration.ofSeconds(60)))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT);
                    assertThat(e.getMessage()).contains("start-resume", "HTTP 409", "tunnel busy");
                });
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        assertThat(h.backend.openInstances()).isEmpty();
    }

    @Test
    void a_start_resume_failure_of_the_extension_is_upstream_failed_on_both_resume_routes() {
        SandboxId id = create("{}");
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        extension.script(Hook.START_RESUME, reply(500, "x"), new FakeExtensionServer.Drop());

        assertThatThrownBy(() -> h.orchestrator.resume(id, Duration.ofSeconds(60)))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED));
        assertThatThrownBy(() -> h.orchestrator.connect(id, Duration.ofSeconds(60)))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED));
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(extension.calls(Hook.STOP)).hasSize(3); // the pause and both failed starts
    }

    @Test
    void a_failing_stop_hook_never_fails_pause_or_kill() {
        SandboxId id = create("{}");
        SandboxId other = create("{}");
        extension.script(Hook.STOP, reply(500, "broken"), new FakeExtensionServer.Drop());

        assertThat(h.orchestrator.pause(id, PauseMode.WITH_MEMORY)).isEqualTo(PauseOutcome.PAUSED);
        h.orchestrator.kill(other);

        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        assertThat(h.store.get(other)).isEmpty();
        assertThat(extension.calls(Hook.STOP)).hasSize(2);
    }

    @Test
    void a_ttl_kill_sends_stop_with_the_started_instance() {
        SandboxId id = h.orchestrator
                .create(new CreateSandbox(
                        "base",
                        Duration.ofSeconds(10),
                        TimeoutAction.KILL,
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
        UUID instance = recordedInstance(id);

        h.orchestrator.evictExpired(OrchestratorHarness.T0.plusSeconds(11));

        assertThat(h.store.get(id)).isEmpty();
        assertThat(extension.calls(Hook.STOP))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .containsExactly(instance);
    }

    @Test
    void a_sandbox_lost_to_a_terminal_pause_failure_gets_a_fire_and_forget_stop() throws Exception {
        SandboxId id = create("{}");
        UUID instance = recordedInstance(id);
        h.backend.failNext(MockOp.PAUSE, new BackendException.Terminal("disk gone"));

        assertThatThrownBy(() -> h.orchestrator.pause(id, PauseMode.WITH_MEMORY))
                .isInstanceOf(AgentEnvException.class);

        assertThat(extension.awaitCalls(Hook.STOP, 1, WAIT))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .containsExactly(instance);
    }

    @Test
    void instances_that_cannot_be_preserved_at_shutdown_get_a_fire_and_forget_stop() throws Exception {
        SandboxId one = create("{}");
        SandboxId two = create("{}");
        UUID first = recordedInstance(one);
        UUID second = recordedInstance(two);
        // the pauses at shutdown both fail recoverably, so both instances are closed without being preserved
        h.backend.failNext(MockOp.PAUSE, new BackendException.Recoverable("criu busy"));
        h.backend.failNext(MockOp.PAUSE, new BackendException.Recoverable("criu busy"));

        h.orchestrator.shutdown();

        assertThat(extension.awaitCalls(Hook.STOP, 2, WAIT))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .containsExactlyInAnyOrder(first, second);
        assertThat(h.backend.openInstances()).isEmpty();
    }

    @Test
    void shutdown_pauses_running_sandboxes_with_their_stop() throws Exception {
        SandboxId id = create("{}");
        UUID instance = recordedInstance(id);

        h.orchestrator.shutdown();

        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        assertThat(extension.calls(Hook.STOP))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .containsExactly(instance);
    }

    // ---- fork and snapshots ------------------------------------------------------------------------------------

    @Test
    void fork_children_each_get_start_resume_and_failures_are_classified_per_child() {
        SandboxId source = create("{\"p\":1}");
        extension.script(Hook.START_RESUME, reply(200, "{}"), reply(400, "child quota"), reply(502, "gateway"));

        List<ForkResult> results = h.orchestrator.fork(source, 3, Optional.empty());

        assertThat(results).hasSize(3);
        assertThat(results.stream().filter(ForkResult.Child.class::isInstance)).hasSize(1);
        Map<ErrorKind, String> failures = results.stream()
                .filter(ForkResult.Failed.class::isInstance)
                .map(ForkResult.Failed.class::cast)
                .collect(Collectors.toMap(ForkResult.Failed::kind, ForkResult.Failed::message));
        assertThat(failures).containsOnlyKeys(ErrorKind.INVALID_ARGUMENT, ErrorKind.UPSTREAM_FAILED);
        assertThat(failures.get(ErrorKind.INVALID_ARGUMENT)).contains("start-resume", "HTTP 400", "child quota");
        assertThat(failures.get(ErrorKind.UPSTREAM_FAILED)).contains("start-resume", "HTTP 502", "gateway");

        List<Call> starts = extension.calls(Hook.START_RESUME);
        assertThat(starts)
                .hasSize(3)
                .allSatisfy(
                        c -> assertThat(c.body().get("customExtensionParams").toString())
                                .isEqualTo("{\"p\":1}"));
        assertThat(starts.stream().map(c -> c.text("sandboxId")).distinct())
                .hasSize(3)
                .doesNotContain(source.value());
        Set<UUID> failedInstances = Set.of(instanceOf(starts.get(1)), instanceOf(starts.get(2)));
        assertThat(extension.calls(Hook.STOP))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .containsExactlyInAnyOrderElementsOf(failedInstances);
        assertThat(h.backend.openInstances()).hasSize(2); // the source and the one child
        assertThat(h.store.all()).hasSize(2);
        assertThat(extension.calls(Hook.START_FRESH)).hasSize(1); // the source only; the capture fired no hook
    }

    @Test
    void a_snapshot_capture_fires_no_hook_and_carries_params_into_sandboxes_made_from_it() {
        SandboxId source = create("{\"vpn\":\"eu\"}");
        int before = extension.calls().size();

        h.orchestrator.snapshot(source, Optional.of("golden"));
        assertThat(extension.calls()).hasSize(before);

        SandboxId inherited = h.orchestrator.create(request("golden", "{}")).id();
        SandboxId overridden =
                h.orchestrator.create(request("golden", "{\"vpn\":\"us\"}")).id();

        List<Call> resumes = extension.calls(Hook.START_RESUME);
        assertThat(resumes).extracting(c -> c.text("sandboxId")).containsExactly(inherited.value(), overridden.value());
        assertThat(resumes.get(0).body().get("customExtensionParams").toString())
                .isEqualTo("{\"vpn\":\"eu\"}");
        assertThat(resumes.get(1).body().get("customExtensionParams").toString())
                .isEqualTo("{\"vpn\":\"us\"}");
        assertThat(h.orchestrator.customExtensionParams(inherited)).isEqualTo("{\"vpn\":\"eu\"}");
        assertThat(h.orchestrator.customExtensionParams(overridden)).isEqualTo("{\"vpn\":\"us\"}");
        assertThat(extension.calls(Hook.START_FRESH)).hasSize(1);
    }

    @Test
    void a_snapshot_create_whose_start_resume_is_refused_is_invalid_argument_leaving_none() {
        SandboxId source = create("{}");
        h.orchestrator.snapshot(source, Optional.of("golden"));
        extension.script(Hook.START_RESUME, reply(404, "no such profile"));

        assertThatThrownBy(() -> h.orchestrator.create(request("golden", "{}")))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("start-resume", "HTTP 404", "no such profile");
                });
        assertThat(h.store.all()).extracting(SandboxRecord::id).containsExactly(source);
        assertThat(h.backend.openInstances()).hasSize(1);
        assertThat(extension.calls(Hook.STOP))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .containsExactly(instanceOf(extension.calls(Hook.START_RESUME).getFirst()));
    }

    // ---- patch -------------------------------------------------------------------------------------------------

    @Test
    void a_patch_sends_the_body_verbatim_and_stores_the_full_params_the_extension_answers() {
        SandboxId id = create("{\"a\":1}");
        extension.script(Hook.PATCH_PARAMS, reply(200, "{\"customExtensionParams\":{\"a\":1,\"b\":2}}"));

        String stored = h.orchestrator.patchCustomExtensionParams(id, "{\"b\":2}");

        assertThat(stored).isEqualTo("{\"a\":1,\"b\":2}");
        assertThat(h.orchestrator.customExtensionParams(id)).isEqualTo(stored);
        Call call = extension.calls(Hook.PATCH_PARAMS).getFirst();
        assertThat(call.text("sandboxId")).isEqualTo(id.value());
        assertThat(call.body().get("patch").toString()).isEqualTo("{\"b\":2}");
    }

    @Test
    void params_patched_while_running_are_what_the_next_resume_sends() {
        SandboxId id = create("{}");
        h.orchestrator.patchCustomExtensionParams(id, "{\"late\":true}");
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);

        h.orchestrator.connect(id, Duration.ofSeconds(60));

        assertThat(extension
                        .calls(Hook.START_RESUME)
                        .getFirst()
                        .body()
                        .get("customExtensionParams")
                        .toString())
                .isEqualTo("{\"late\":true}");
    }

    @Test
    void refused_patches_are_invalid_argument_failed_ones_upstream_failed_neither_applies() {
        SandboxId id = create("{\"a\":1}");
        extension.script(
                Hook.PATCH_PARAMS, reply(400, "b is not allowed"), reply(500, "oops"), new FakeExtensionServer.Hang());

        assertThatThrownBy(() -> h.orchestrator.patchCustomExtensionParams(id, "{\"b\":2}"))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("patch-params", "HTTP 400", "b is not allowed");
                });
        assertThatThrownBy(() -> h.orchestrator.patchCustomExtensionParams(id, "{\"b\":2}"))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED));
        assertThatThrownBy(() -> h.orchestrator.patchCustomExtensionParams(id, "{\"b\":2}"))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED);
                    assertThat(e.getMessage()).contains("did not answer within 2000 ms");
                });
        assertThat(h.orchestrator.customExtensionParams(id)).isEqualTo("{\"a\":1}");
    }

    @Test
    void a_patch_needs_a_running_sandbox_and_does_not_call_the_extension_otherwise() {
        SandboxId id = create("{}");
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);

        assertThatThrownBy(() -> h.orchestrator.patchCustomExtensionParams(id, "{\"a\":1}"))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT));
        assertThat(extension.calls(Hook.PATCH_PARAMS)).isEmpty();
    }

    @Test
    void a_sandbox_paused_while_its_patch_hook_runs_is_a_conflict_and_keeps_old_params() throws Exception {
        SandboxId id = create("{\"a\":1}");
        FakeExtensionServer.Hold hold =
                extension.holdNext(Hook.PATCH_PARAMS, reply(200, "{\"customExtensionParams\":{\"a\":2}}"));
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<String> patch = threads.submit(() -> h.orchestrator.patchCustomExtensionParams(id, "{\"a\":2}"));
            hold.awaitEntered(WAIT);

            assertThat(h.orchestrator.pause(id, PauseMode.WITH_MEMORY)).isEqualTo(PauseOutcome.PAUSED); // not blocked
            hold.release();

            assertThatThrownBy(() -> patch.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .hasCauseInstanceOf(AgentEnvException.class)
                    .cause()
                    .satisfies(e -> {
                        assertThat(((AgentEnvException) e).kind()).isEqualTo(ErrorKind.CONFLICT);
                        assertThat(e.getMessage()).contains("paused", "not changed");
                    });
        }
        assertThat(h.orchestrator.customExtensionParams(id)).isEqualTo("{\"a\":1}");
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
    }

    @Test
    void concurrent_patches_store_their_answers_the_last_wins_other_columns_survive() throws Exception {
        SandboxId id = create("{}");
        FakeExtensionServer.Hold first =
                extension.holdNext(Hook.PATCH_PARAMS, reply(200, "{\"customExtensionParams\":{\"from\":\"first\"}}"));
        FakeExtensionServer.Hold second =
                extension.holdNext(Hook.PATCH_PARAMS, reply(200, "{\"customExtensionParams\":{\"from\":\"second\"}}"));
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<String> one = threads.submit(() -> h.orchestrator.patchCustomExtensionParams(id, "{\"n\":1}"));
            first.awaitEntered(WAIT);
            Future<String> two = threads.submit(() -> h.orchestrator.patchCustomExtensionParams(id, "{\"n\":2}"));
            second.awaitEntered(WAIT);
            h.orchestrator.setTimeout(id, Duration.ofSeconds(42)); // a narrow write made while both hooks run

            second.release();
            assertThat(two.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("{\"from\":\"second\"}");
            assertThat(h.orchestrator.customExtensionParams(id)).isEqualTo("{\"from\":\"second\"}");
            first.release();
            assertThat(one.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("{\"from\":\"first\"}");
        }
        assertThat(h.orchestrator.customExtensionParams(id)).isEqualTo("{\"from\":\"first\"}");
        assertThat(h.store.get(id).orElseThrow().timeout()).isEqualTo(Duration.ofSeconds(42));
        assertThat(extension.calls(Hook.PATCH_PARAMS))
                .extracting(c -> c.body().get("patch").toString())
                .containsExactly("{\"n\":1}", "{\"n\":2}");
    }

    // ---- recovery ----------------------------------------------------------------------------------------------

    @Test
    void a_running_sandbox_whose_instance_vanished_over_a_restart_gets_a_stop_for_it() throws Exception {
        SandboxId id = create("{}");
        UUID instance = recordedInstance(id);
        h.backend.loseAllInstances();

        h.restart();

        assertThat(h.store.get(id)).isEmpty();
        assertThat(extension.awaitCalls(Hook.STOP, 1, WAIT))
                .extracting(CustomExtensionHooksTest::instanceOf)
                .containsExactly(instance);
    }
}
