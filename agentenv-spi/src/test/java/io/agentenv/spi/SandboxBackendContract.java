package io.agentenv.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The behaviour every backend owes the orchestrator, as one abstract test: extend it once per backend (the mock in
 * its own tests, a real backend in its host tests) so a fake cannot drift from the real thing. Published in this
 * module's test-jar ({@code <type>test-jar</type>}, test scope).
 */
public abstract class SandboxBackendContract {
    private static final SecureRandom RANDOM = new SecureRandom();
    private final List<SandboxBackend> opened = new ArrayList<>();

    @TempDir
    protected Path artifacts;

    /** The factory under test, initialised and ready. */
    protected abstract SandboxBackendFactory factory();

    /** A built-in template of that factory (usually {@code base}). */
    protected TemplateId template() {
        return new TemplateId("base");
    }

    /** How long a start or restore may take on this backend. */
    protected Duration readyTimeout() {
        return Duration.ofSeconds(60);
    }

    protected LaunchSpec spec() {
        return new LaunchSpec(
                SandboxId.random(RANDOM),
                template(),
                Map.of("CONTRACT", "1"),
                "user",
                new AccessToken("contract-token"),
                NetworkPolicy.DEFAULT);
    }

    protected SandboxBackend prepare(LaunchSpec spec, LaunchSource source) throws BackendException {
        SandboxBackend backend = factory().prepare(spec, source);
        opened.add(backend);
        return backend;
    }

    protected SandboxBackend started() throws BackendException {
        SandboxBackend backend = prepare(spec(), new LaunchSource.Template(template()));
        backend.start(readyTimeout());
        return backend;
    }

    @AfterEach
    void closeEverything() throws BackendException {
        for (SandboxBackend backend : opened) {
            backend.close();
        }
    }

    @Test
    void the_factory_offers_the_template_it_is_tested_with() {
        assertThat(factory().templates()).extracting(TemplateDescriptor::id).contains(template());
    }

    @Test
    void a_lookup_by_id_finds_each_listed_template_as_listed_and_no_unlisted_one() {
        for (TemplateDescriptor listed : factory().templates()) {
            assertThat(factory().template(listed.id())).contains(listed);
        }
        assertThat(factory().template(new TemplateId("not-a-template-" + RANDOM.nextInt(1_000_000))))
                .isEmpty();
    }

    @Test
    void a_started_instance_reports_real_resources() throws Exception {
        SandboxBackend backend = started();
        Resources resources = backend.resources();
        assertThat(resources.cpuCount()).isPositive();
        assertThat(resources.memoryMiB()).isPositive();
        assertThat(resources.diskSizeMiB()).isPositive();
    }

    @Test
    void close_is_idempotent_and_also_works_on_an_instance_that_never_started() throws Exception {
        SandboxBackend never = prepare(spec(), new LaunchSource.Template(template()));
        never.close();
        never.close();
        SandboxBackend running = started();
        running.close();
        assertThatCode(running::close).doesNotThrowAnyException();
        assertThat(running.guest()).isEmpty();
    }

    @Test
    void a_paused_instance_stops_and_its_state_survives_encoding_and_resumes() throws Exception {
        // given
        LaunchSpec spec = spec();
        SandboxBackend backend = prepare(spec, new LaunchSource.Template(template()));
        backend.start(readyTimeout());
        Path dir = artifacts.resolve("paused");
        // when
        PausedState paused = backend.pause(PauseMode.WITH_MEMORY, dir);
        backend.close();
        PausedState decoded = factory().decodePausedState(paused.encode(), dir);
        SandboxBackend resumed = prepare(spec, new LaunchSource.Paused(decoded));
        resumed.start(readyTimeout());
        // then
        assertThat(backend.guest()).isEmpty();
        assertThat(decoded.mode()).isEqualTo(PauseMode.WITH_MEMORY);
        assertThat(resumed.resources()).isEqualTo(paused.resources());
    }

    @Test
    void a_snapshot_leaves_the_instance_running_and_starts_several_children() throws Exception {
        // given
        SandboxBackend source = started();
        Path dir = artifacts.resolve("snapshot");
        // when
        SnapshotState snapshot = source.snapshot(dir);
        SnapshotState decoded = factory().decodeSnapshotState(snapshot.encode(), dir);
        SandboxBackend first = prepare(spec(), new LaunchSource.Snapshot(decoded));
        SandboxBackend second = prepare(spec(), new LaunchSource.Snapshot(decoded));
        first.start(readyTimeout());
        second.start(readyTimeout());
        // then: the source can still be captured, so it is running
        assertThatCode(() -> source.snapshot(artifacts.resolve("again"))).doesNotThrowAnyException();
        assertThat(first.resources()).isEqualTo(snapshot.resources());
    }

    @Test
    void the_host_network_is_known_from_prepare_on_and_stays_the_same_once_started() throws Exception {
        // custom-extension start hooks read it between prepare and start
        SandboxBackend backend = prepare(spec(), new LaunchSource.Template(template()));
        Optional<HostNetwork> prepared = backend.hostNetwork();
        backend.start(readyTimeout());
        assertThat(backend.hostNetwork()).isEqualTo(prepared);
        prepared.ifPresent(network -> assertThat(network.namespacePath()).isAbsolute());
    }

    @Test
    void the_guest_agent_is_absent_before_start_then_answers_and_dies_with_its_generation() throws Exception {
        SandboxBackend backend = prepare(spec(), new LaunchSource.Template(template()));
        assertThat(backend.envd()).isEmpty();
        backend.start(readyTimeout());
        Optional<EnvdApi> envd = backend.envd(); // empty only for a backend without a guest agent
        if (envd.isPresent()) {
            envd.get().health();
            assertThat(envd.get().metrics().cpuCount()).isPositive();
        }
        backend.pause(PauseMode.WITH_MEMORY, artifacts.resolve("guest-paused"));
        assertThat(backend.envd()).isEmpty();
        if (envd.isPresent()) {
            assertThatThrownBy(envd.get()::health).isInstanceOf(EnvdException.class);
        }
    }

    @Test
    void a_started_instance_is_alive_and_a_frozen_one_too() throws Exception {
        SandboxBackend backend = started();
        assertThat(backend.liveness()).isEqualTo(Liveness.ALIVE);
        backend.freeze();
        assertThat(backend.liveness()).isEqualTo(Liveness.ALIVE);
        backend.thaw();
    }

    @Test
    void freeze_and_thaw_are_idempotent() throws Exception {
        SandboxBackend backend = started();
        backend.freeze();
        backend.freeze();
        backend.thaw();
        backend.thaw();
        assertThatCode(() -> backend.snapshot(artifacts.resolve("after-thaw"))).doesNotThrowAnyException();
    }

    @Test
    void a_network_policy_can_be_replaced_while_running() throws Exception {
        SandboxBackend backend = started();
        NetworkPolicy policy = new NetworkPolicy(
                NetworkPolicy.InternetAccess.DENIED,
                List.of("10.0.0.0/8"),
                List.of(),
                NetworkPolicy.PublicTraffic.ALLOWED);
        assertThatCode(() -> backend.updateNetwork(policy)).doesNotThrowAnyException();
        assertThatCode(() -> backend.updateNetwork(NetworkPolicy.DEFAULT)).doesNotThrowAnyException();
    }
}
