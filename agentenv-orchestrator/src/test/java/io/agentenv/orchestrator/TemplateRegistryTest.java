package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Templates as objects over the mock backend: tags keep builds, creates by name:tag, deletion and its refusals. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateRegistryTest {
    private static final Resources RESOURCES = new Resources(2, 512, 1024);

    @TempDir
    Path dir;

    OrchestratorHarness h;
    SandboxGuests guests;
    MemoryTemplateBuildStore store;
    TemplateBuilder builder;
    TemplateRegistry registry;
    /** The templates whose uploads were deleted. */
    final List<TemplateId> uploadsDeleted = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        h = new OrchestratorHarness(dir);
        guests = new SandboxGuests(h.orchestrator, GuestSettings.defaults(), h.clock);
        store = new MemoryTemplateBuildStore();
        builder = new TemplateBuilder(
                h.orchestrator,
                guests,
                store,
                ImageSource.none(),
                new TemplateFiles() {
                    @Override
                    public Optional<Archive> archive(TemplateId template, String hash) {
                        return Optional.empty();
                    }

                    @Override
                    public void deleteAll(TemplateId template) {
                        uploadsDeleted.add(template);
                    }
                },
                "user",
                h.clock,
                Runnable::run);
        registry = builder.registry();
    }

    @AfterEach
    void stop() {
        builder.close();
        guests.close();
        h.close();
    }

    /** Builds {@code name} (with {@code tags}) from base with one ENV step; builds run on this thread. */
    private BuildRecord build(String name, List<String> tags, String value) {
        h.clock.advance(Duration.ofSeconds(1)); // builds are ordered by when they were requested
        TemplateBuilder.Requested requested = builder.request(Optional.of(name), tags, RESOURCES);
        builder.start(
                requested.template().id(),
                requested.build().id(),
                new TemplateBuilder.BuildSpec(
                        Optional.of("base"),
                        Optional.empty(),
                        Optional.empty(),
                        List.of(new TemplateBuilder.Step("ENV", List.of("V", value), Optional.empty(), false)),
                        Optional.empty(),
                        Optional.empty(),
                        false));
        BuildRecord build = store.build(requested.build().id()).orElseThrow();
        assertThat(build.status()).isEqualTo(BuildRecord.Status.READY);
        return build;
    }

    private String envOf(String template) {
        SandboxId id = h.orchestrator
                .create(CreateSandbox.of(template, Duration.ofSeconds(60)))
                .id();
        return h.store.get(id).orElseThrow().envVars().get("V");
    }

    private static ErrorKind kind(Throwable e) {
        return ((AgentEnvException) e).kind();
    }

    @Test
    void a_tagged_build_stays_creatable_after_a_rebuild_and_its_tag_can_move() {
        BuildRecord v1 = build("app", List.of("v1"), "one");
        BuildRecord v2 = build("app", List.of(), "two");

        assertThat(envOf("app")).isEqualTo("two");
        assertThat(envOf("app:v1")).isEqualTo("one");
        assertThat(envOf("app:default")).isEqualTo("two");
        assertThat(envOf("app:" + v2.id())).isEqualTo("two");
        assertThat(registry.tags("app"))
                .extracting(TagAssignment::tag, TagAssignment::buildId)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("default", v2.id()),
                        org.assertj.core.groups.Tuple.tuple("v1", v1.id()));

        TemplateRegistry.Assigned moved = registry.assign("app", List.of("v1", "stable"));

        assertThat(moved.buildId()).isEqualTo(v2.id());
        assertThat(envOf("app:v1")).isEqualTo("two");
        TemplateId oldSnapshot = store.build(v1.id()).orElseThrow().snapshot().orElseThrow();
        assertThat(h.orchestrator.findTemplate(oldSnapshot.value()))
                .as("no tag names the first build: its snapshot is gone")
                .isEmpty();
        assertThatThrownBy(() -> envOf("app:" + v1.id()))
                .satisfies(e -> assertThat(kind(e)).isEqualTo(ErrorKind.INVALID_ARGUMENT))
                .hasMessageContaining("no longer exists");
    }

    @Test
    void removing_the_last_tag_of_an_old_build_deletes_its_snapshot() {
        BuildRecord v1 = build("svc", List.of("v1"), "one");
        build("svc", List.of("v2"), "two");
        TemplateId oldSnapshot = store.build(v1.id()).orElseThrow().snapshot().orElseThrow();
        assertThat(h.orchestrator.findTemplate(oldSnapshot.value())).isPresent();

        registry.remove("svc", List.of("v1"));

        assertThat(h.orchestrator.findTemplate(oldSnapshot.value())).isEmpty();
        assertThat(registry.tags("svc")).extracting(TagAssignment::tag).containsExactly("default", "v2");
        assertThatThrownBy(() -> envOf("svc:v1"))
                .satisfies(e -> assertThat(kind(e)).isEqualTo(ErrorKind.INVALID_ARGUMENT))
                .hasMessageContaining("no tag or build v1");
        assertThatThrownBy(() -> registry.remove("svc", List.of("v1")))
                .satisfies(e -> assertThat(kind(e)).isEqualTo(ErrorKind.NOT_FOUND));
        assertThatThrownBy(() -> registry.remove("svc", List.of("default")))
                .satisfies(e -> assertThat(kind(e)).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        assertThatThrownBy(() -> registry.assign("svc:nope", List.of("x")))
                .satisfies(e -> assertThat(kind(e)).isEqualTo(ErrorKind.NOT_FOUND));
    }

    @Test
    void delete_is_refused_while_a_sandbox_of_it_runs_or_is_paused() {
        build("busy", List.of("v1"), "one");
        SandboxId sandbox = h.orchestrator
                .create(CreateSandbox.of("busy:v1", Duration.ofSeconds(60)))
                .id();
        h.orchestrator.pause(sandbox, PauseMode.WITH_MEMORY);

        assertThatThrownBy(() -> registry.delete("busy"))
                .satisfies(e -> assertThat(kind(e)).isEqualTo(ErrorKind.CONFLICT))
                .hasMessageContaining(sandbox.value())
                .hasMessageContaining("paused");
        assertThat(registry.find("busy")).isPresent();

        h.orchestrator.kill(sandbox);
        assertThat(registry.delete("busy")).isTrue();
        assertThat(registry.delete("busy")).isFalse();
    }

    @Test
    void delete_removes_builds_tags_snapshots_and_uploads_and_frees_the_name() {
        BuildRecord first = build("gone", List.of("v1"), "one");
        build("gone", List.of(), "two");
        TemplateId templateId = first.template();

        assertThat(registry.delete(templateId.value())).isTrue();

        assertThat(registry.find("gone")).isEmpty();
        assertThat(store.builds(templateId)).isEmpty();
        assertThat(store.tags(templateId)).isEmpty();
        assertThat(uploadsDeleted).containsExactly(templateId);
        assertThat(h.orchestrator.findTemplate("gone")).isEmpty();
        assertThat(h.orchestrator.findTemplate(first.snapshot().orElseThrow().value()))
                .isEmpty();
        BuildRecord again = build("gone", List.of(), "three");
        assertThat(again.template()).isNotEqualTo(templateId);
        assertThat(envOf("gone")).isEqualTo("three");
    }
}
