package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.MockBackendFactory;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Template builds over the mock backend: steps as envd commands, the result in the catalog, failures, restarts. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateBuilderTest {
    private static final Resources RESOURCES = new Resources(2, 512, 1024);

    @TempDir
    Path dir;

    OrchestratorHarness h;
    SandboxGuests guests;
    MemoryTemplateBuildStore store;
    TemplateBuilder builder;
    /** What the image source pulls: {@link #pulled} answers, {@link #pulls} records. */
    final List<String> pulls = new ArrayList<>();

    ImageSource.Image pulled;
    final ImageSource images = (reference, credentials, log) -> {
        pulls.add(reference + credentials.map(c -> " as " + c.username()).orElse(""));
        log.accept("pulled " + reference);
        if (pulled == null) {
            throw new ImageSource.PullException("manifest unknown: " + reference, null);
        }
        return pulled;
    };

    @BeforeEach
    void start() {
        h = new OrchestratorHarness(dir);
        guests = new SandboxGuests(h.orchestrator, GuestSettings.defaults(), h.clock);
        store = new MemoryTemplateBuildStore();
        builder = new TemplateBuilder(
                h.orchestrator, guests, store, images, TemplateFiles.none(), "user", h.clock, Runnable::run);
    }

    @AfterEach
    void stop() {
        builder.close();
        guests.close();
        h.close();
    }

    private static TemplateBuilder.Step step(String type, String... args) {
        return new TemplateBuilder.Step(type, List.of(args), Optional.empty(), false);
    }

    private static TemplateBuilder.BuildSpec fromBase(TemplateBuilder.Step... steps) {
        return new TemplateBuilder.BuildSpec(
                Optional.empty(),
                Optional.of("e2bdev/base:latest"),
                Optional.empty(),
                List.of(steps),
                Optional.empty(),
                Optional.empty(),
                false);
    }

    /** The build's status with every log line; builds run on the calling thread here, so it is finished. */
    private TemplateBuilder.Status finished(TemplateBuilder.Requested requested) {
        TemplateBuilder.Status status =
                builder.status(requested.template().id(), requested.build().id(), 0);
        assertThat(status.build().status().finished())
                .as(status.build().toString())
                .isTrue();
        return status;
    }

    /** Every command the build sandbox ran, answered by {@code behaviour}. */
    private void commands(FakeEnvdCommands behaviour) {
        h.backend.onPrepare(instance -> instance.fakeEnvd().commands(behaviour::run));
    }

    @FunctionalInterface
    interface FakeEnvdCommands {
        GuestCommand.Exit run(GuestCommand command, GuestCommand.Output output);
    }

    @Test
    void steps_run_as_their_user_with_env_and_workdir_and_the_result_is_a_template() throws Exception {
        TemplateBuilder.Requested requested = builder.request(Optional.of("web:v1"), List.of(), RESOURCES);
        builder.start(
                requested.template().id(),
                requested.build().id(),
                fromBase(
                        step("ENV", "MODE", "prod", "PORT", "8080"),
                        step("WORKDIR", "/srv/app"),
                        step("RUN", "apt-get install -y nginx", "root"),
                        step("USER", "www"),
                        step("RUN", "echo hello")));

        TemplateBuilder.Status status = finished(requested);

        assertThat(status.build().status()).as(status.logs().toString()).isEqualTo(BuildRecord.Status.READY);
        assertThat(status.build().tags()).containsExactly("v1");
        assertThat(requested.template().names()).containsExactly("web");
        MockSandbox buildInstance = h.backend.instances().getFirst();
        SandboxId buildSandbox = buildInstance.spec().id();
        List<GuestCommand> ran = buildInstance.fakeEnvd().ran();
        Map<String, String> env = Map.of("MODE", "prod", "PORT", "8080");
        assertThat(ran)
                .containsExactly(
                        GuestCommand.shell("mkdir -p -- '/srv/app'", Optional.of("root"), env, Optional.empty()),
                        GuestCommand.shell(
                                "apt-get install -y nginx", Optional.of("root"), env, Optional.of("/srv/app")),
                        GuestCommand.shell("echo hello", Optional.of("www"), env, Optional.of("/srv/app")));
        assertThat(h.orchestrator.findTemplate("web"))
                .hasValueSatisfying(t -> assertThat(t.source()).isEqualTo(TemplateView.Source.SNAPSHOT));
        assertThat(h.orchestrator.findTemplate(requested.template().id().value()))
                .map(TemplateView::id)
                .isEqualTo(h.orchestrator.findTemplate("web").map(TemplateView::id));
        SandboxId fromTemplate = h.orchestrator
                .create(CreateSandbox.of("web", Duration.ofSeconds(60)))
                .id();
        assertThat(h.store.get(fromTemplate).orElseThrow().envVars()).containsAllEntriesOf(env);
        assertThat(h.store.get(buildSandbox)).as("the build sandbox is killed").isEmpty();
        // the last USER and WORKDIR are the template's sandboxes' defaults
        EnvdInit init = h.backend.instances().getLast().fakeEnvd().inits().getLast();
        assertThat(init.defaultUser()).contains("www");
        assertThat(init.defaultWorkdir()).contains("/srv/app");
    }

    @Test
    void a_failing_run_step_ends_the_build_with_its_output_and_exit_code() throws Exception {
        commands((command, output) -> {
            output.stdout("compiling\nerror: no main\n".getBytes(StandardCharsets.UTF_8));
            return new GuestCommand.Exit(2, true, "exit status 2");
        });
        TemplateBuilder.Requested requested = builder.request(Optional.of("broken"), List.of(), RESOURCES);
        builder.start(
                requested.template().id(),
                requested.build().id(),
                fromBase(step("ENV", "A", "1"), step("RUN", "make")));

        TemplateBuilder.Status status = finished(requested);

        assertThat(status.build().status()).isEqualTo(BuildRecord.Status.ERROR);
        assertThat(status.build().step()).contains("2");
        assertThat(status.build().reason()).contains("step 2 (RUN make) exited with code 2");
        assertThat(status.logs())
                .filteredOn(l -> l.step().equals(Optional.of("2")))
                .extracting(BuildLogLine::message)
                .contains("compiling", "error: no main");
        assertThat(h.orchestrator.findTemplate("broken")).isEmpty();
        assertThat(h.store.all()).as("the build sandbox is killed").isEmpty();
    }

    private static TemplateBuilder.BuildSpec fromImage(
            String image, Optional<ImageSource.Credentials> credentials, TemplateBuilder.Step... steps) {
        return new TemplateBuilder.BuildSpec(
                Optional.empty(),
                Optional.of(image),
                credentials,
                List.of(steps),
                Optional.empty(),
                Optional.empty(),
                false);
    }

    @Test
    void an_image_becomes_a_template_prepared_then_built_with_its_config() throws Exception {
        Path rootfs = Files.createDirectories(dir.resolve("images/abc/rootfs"));
        pulled = new ImageSource.Image(
                "sha256:0123456789abcdef0123456789abcdef",
                rootfs,
                List.of("PATH=/opt/app/bin:/usr/bin", "LANG=C.UTF-8"),
                Optional.of("/opt/app"),
                Optional.of("app:app"));
        TemplateBuilder.Requested requested = builder.request(Optional.of("from-image"), List.of(), RESOURCES);
        builder.start(
                requested.template().id(),
                requested.build().id(),
                fromImage(
                        "127.0.0.1:5000/app:1",
                        Optional.of(new ImageSource.Credentials("ci", "secret")),
                        step("RUN", "make")));

        TemplateBuilder.Status status = finished(requested);

        assertThat(status.build().status()).as(status.logs().toString()).isEqualTo(BuildRecord.Status.READY);
        assertThat(pulls).containsExactly("127.0.0.1:5000/app:1 as ci");
        // the image's boot prepares it (before its envd starts), not a command of the build
        assertThat(h.backend.imageTemplates())
                .containsEntry(
                        new TemplateId("img-0123456789abcdef"),
                        new MockBackendFactory.AddedImage(
                                rootfs, BuildBases.provisioning("user", Optional.of("/opt/app"))));
        MockSandbox buildInstance = h.backend.instances().getFirst();
        assertThat(buildInstance.spec().template()).isEqualTo(new TemplateId("img-0123456789abcdef"));
        List<GuestCommand> ran = buildInstance.fakeEnvd().ran();
        assertThat(ran).hasSize(1);
        assertThat(ran.getFirst())
                .isEqualTo(GuestCommand.shell(
                        "make",
                        Optional.of("app"),
                        Map.of("PATH", "/opt/app/bin:/usr/bin", "LANG", "C.UTF-8"),
                        Optional.of("/opt/app")));
        assertThat(status.logs()).extracting(BuildLogLine::message).contains("pulled 127.0.0.1:5000/app:1");
        SandboxId fromTemplate = h.orchestrator
                .create(CreateSandbox.of("from-image", Duration.ofSeconds(60)))
                .id();
        assertThat(h.store.get(fromTemplate).orElseThrow().envVars()).containsEntry("PATH", "/opt/app/bin:/usr/bin");
    }

    @Test
    void an_image_that_cannot_be_pulled_fails_the_build_with_the_reason() throws Exception {
        TemplateBuilder.Requested image = builder.request(Optional.empty(), List.of(), RESOURCES);
        builder.start(image.template().id(), image.build().id(), fromImage("ubuntu:22.04", Optional.empty()));

        TemplateBuilder.Status status = finished(image);

        assertThat(status.build().status()).isEqualTo(BuildRecord.Status.ERROR);
        assertThat(status.build().step()).contains("base");
        assertThat(status.build().reason())
                .hasValueSatisfying(r -> assertThat(r).contains("ubuntu:22.04").contains("manifest unknown"));
        assertThat(h.backend.instances()).as("no build sandbox was made").isEmpty();
    }

    private static TemplateBuilder.BuildSpec withStart(String start, String ready) {
        return new TemplateBuilder.BuildSpec(
                Optional.of("base"),
                Optional.empty(),
                Optional.empty(),
                List.of(step("USER", "app"), step("WORKDIR", "/srv")),
                Optional.of(start),
                Optional.of(ready),
                false);
    }

    @Test
    void the_start_command_runs_in_the_background_until_the_ready_command_succeeds() throws Exception {
        TemplateBuilder.Requested requested = builder.request(Optional.of("server"), List.of(), RESOURCES);
        builder.start(
                requested.template().id(),
                requested.build().id(),
                withStart("python3 -m http.server 8000", "curl -sf localhost:8000"));

        TemplateBuilder.Status status = finished(requested);

        assertThat(status.build().status()).as(status.logs().toString()).isEqualTo(BuildRecord.Status.READY);
        List<GuestCommand> ran = h.backend.instances().getFirst().fakeEnvd().ran();
        assertThat(ran).hasSize(4); // WORKDIR, the start command's log, start, ready
        assertThat(ran.get(1).args().getLast()).endsWith("chown 'app' '" + BuildSteps.START_LOG + "'");
        assertThat(ran.get(1).user()).contains("root");
        GuestCommand start = ran.get(2);
        assertThat(start.args().getLast())
                .isEqualTo("( python3 -m http.server 8000\n) </dev/null >'" + BuildSteps.START_LOG + "' 2>&1 &");
        assertThat(start.user()).contains("app");
        assertThat(start.cwd()).contains("/srv");
        GuestCommand ready = ran.get(3);
        assertThat(ready.args().getLast())
                .startsWith("n=0; until ( curl -sf localhost:8000\n)")
                .contains("-ge " + BuildSteps.READY_ATTEMPTS);
        assertThat(ready.user()).contains("app");
        assertThat(status.logs()).extracting(BuildLogLine::message).contains("ready");
        assertThat(h.orchestrator.findTemplate("server")).isPresent();
    }

    @Test
    void a_ready_command_that_never_succeeds_fails_the_build_with_the_start_log() throws Exception {
        commands((command, output) -> {
            String script = command.args().getLast();
            if (script.startsWith("n=0; until")) {
                return new GuestCommand.Exit(124, true, "exit status 124");
            }
            if (script.startsWith("tail -n 50")) {
                output.stdout("Traceback: port in use\n".getBytes(StandardCharsets.UTF_8));
            }
            return new GuestCommand.Exit(0, true, "exit status 0");
        });
        TemplateBuilder.Requested requested = builder.request(Optional.of("never-ready"), List.of(), RESOURCES);
        builder.start(requested.template().id(), requested.build().id(), withStart("./serve", "false"));

        TemplateBuilder.Status status = finished(requested);

        assertThat(status.build().status()).isEqualTo(BuildRecord.Status.ERROR);
        assertThat(status.build().step()).contains("finalize");
        assertThat(status.build().reason())
                .hasValueSatisfying(
                        r -> assertThat(r).contains("the ready command did not succeed within 120 s: false"));
        assertThat(status.logs()).extracting(BuildLogLine::message).contains("Traceback: port in use");
        assertThat(h.orchestrator.findTemplate("never-ready")).isEmpty();
        assertThat(h.store.all()).as("the build sandbox is killed").isEmpty();
    }

    private TemplateBuilder.Status buildApp(TemplateBuilder.BuildSpec spec) {
        TemplateBuilder.Requested requested = builder.request(Optional.of("cached-app"), List.of(), RESOURCES);
        builder.start(requested.template().id(), requested.build().id(), spec);
        return finished(requested);
    }

    private static TemplateBuilder.BuildSpec forced(TemplateBuilder.BuildSpec spec) {
        return new TemplateBuilder.BuildSpec(
                spec.fromTemplate(),
                spec.fromImage(),
                spec.registryCredentials(),
                spec.steps(),
                spec.startCmd(),
                spec.readyCmd(),
                true);
    }

    @Test
    void an_unchanged_rebuild_starts_from_the_cached_layers_and_runs_nothing() throws Exception {
        TemplateBuilder.BuildSpec spec =
                fromBase(step("ENV", "A", "1"), step("RUN", "make deps"), step("USER", "app"), step("RUN", "make"));
        assertThat(buildApp(spec).build().status()).isEqualTo(BuildRecord.Status.READY);
        assertThat(store.layerKeys()).hasSize(2); // one layer per RUN
        int instances = h.backend.instances().size();

        TemplateBuilder.Status again = buildApp(spec);

        assertThat(again.build().status()).as(again.logs().toString()).isEqualTo(BuildRecord.Status.READY);
        MockSandbox rebuild = h.backend.instances().get(instances);
        assertThat(rebuild.fakeEnvd().ran()).as("every step was cached").isEmpty();
        assertThat(rebuild.spec().template().value()).isNotEqualTo("base");
        assertThat(again.logs())
                .extracting(BuildLogLine::message)
                .contains("cached: RUN make deps", "cached: USER app", "cached: RUN make");
        assertThat(h.store.get(rebuild.spec().id()))
                .as("the build sandbox is killed")
                .isEmpty();
        h.orchestrator.create(CreateSandbox.of("cached-app", Duration.ofSeconds(60)));
        assertThat(h.backend.instances().getLast().fakeEnvd().inits().getLast().defaultUser())
                .as("the skipped USER step still sets the template's user")
                .contains("app");
    }

    @Test
    void a_changed_step_reruns_from_there_and_force_reruns_everything() throws Exception {
        buildApp(fromBase(step("RUN", "make deps"), step("RUN", "make")));
        int before = h.backend.instances().size();

        buildApp(fromBase(step("RUN", "make deps"), step("RUN", "make all")));
        List<GuestCommand> changed =
                h.backend.instances().get(before).fakeEnvd().ran();
        buildApp(forced(fromBase(step("RUN", "make deps"), step("RUN", "make all"))));
        List<GuestCommand> rerun = h.backend.instances().getLast().fakeEnvd().ran();

        assertThat(changed).extracting(c -> c.args().getLast()).containsExactly("make all");
        assertThat(rerun).extracting(c -> c.args().getLast()).containsExactly("make deps", "make all");
    }

    @Test
    void a_rebuild_keeps_the_template_id_and_replaces_the_previous_snapshot() throws Exception {
        TemplateBuilder.Requested first = builder.request(Optional.of("app"), List.of(), RESOURCES);
        builder.start(first.template().id(), first.build().id(), fromBase(step("RUN", "true")));
        assertThat(finished(first).build().status()).isEqualTo(BuildRecord.Status.READY);
        TemplateView before = h.orchestrator.findTemplate("app").orElseThrow();

        TemplateBuilder.Requested second = builder.request(Optional.of("app"), List.of("v2"), RESOURCES);
        assertThat(second.template().id()).isEqualTo(first.template().id());
        builder.start(second.template().id(), second.build().id(), fromBase(step("ENV", "V", "2")));
        assertThat(finished(second).build().status()).isEqualTo(BuildRecord.Status.READY);

        TemplateView after = h.orchestrator.findTemplate("app").orElseThrow();
        assertThat(after.id()).isNotEqualTo(before.id());
        assertThat(h.orchestrator.findTemplate(before.id().value())).isEmpty();
        assertThat(builder.builds(first.template().id()))
                .extracting(BuildRecord::id)
                .containsExactlyInAnyOrder(first.build().id(), second.build().id());
    }

    @Test
    void bad_names_taken_names_and_a_second_start_are_refused() {
        assertThatThrownBy(() -> builder.request(Optional.of("Bad Name"), List.of(), RESOURCES))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        assertThatThrownBy(() -> builder.request(Optional.of("base"), List.of(), RESOURCES))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT));
        TemplateBuilder.Requested requested = builder.request(Optional.of("once"), List.of(), RESOURCES);
        TemplateBuilder.BuildSpec spec = fromBase();
        builder.start(requested.template().id(), requested.build().id(), spec);
        assertThatThrownBy(() -> builder.start(
                        requested.template().id(), requested.build().id(), spec))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT));
        assertThatThrownBy(() -> builder.status(requested.template().id(), "no-such-build", 0))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
    }

    @Test
    void a_restart_fails_the_builds_that_were_running() {
        TemplateBuilder.Requested waiting = builder.request(Optional.of("left"), List.of(), RESOURCES);

        new TemplateBuilder(h.orchestrator, guests, store, images, TemplateFiles.none(), "user", h.clock).recover();

        BuildRecord build = store.build(waiting.build().id()).orElseThrow();
        assertThat(build.status()).isEqualTo(BuildRecord.Status.ERROR);
        assertThat(build.reason()).contains("the server restarted during the build");
    }
}
