package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.spi.Resources;
import io.agentenv.spi.TemplateId;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link TemplateBuildStore} owes the builder, as one abstract test (names, conditional updates, paging,
 * restarts, deletes, cached layers): extend it once per store. The build store lives in a sandbox store's database
 * (the snapshot catalog leaves its cached layers out), so a subclass opens the sandbox store and names its build store.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
public abstract class TemplateBuildStoreContract {
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00.123456789Z");
    private static final Resources RESOURCES = new Resources(2, 1024, 4096);

    @TempDir
    protected Path dir;

    /** The sandbox store whose database holds {@link #store}. */
    protected SandboxStore sandboxes;

    protected TemplateBuildStore store;

    /** A sandbox store on {@code dir}; opening the same directory again after a close is a restart on the same data. */
    protected abstract SandboxStore open(Path dir);

    /** The build store in {@code sandboxes}' database. */
    protected abstract TemplateBuildStore templateBuilds(SandboxStore sandboxes);

    @BeforeEach
    void openStores() {
        sandboxes = open(dir);
        store = templateBuilds(sandboxes);
    }

    @AfterEach
    void closeStores() {
        sandboxes.close();
    }

    /** Closes the stores and opens them again on the same data, as a restart does. */
    protected final void reopen() {
        closeStores();
        openStores();
    }

    private static TemplateRecord template(String id, String... names) {
        return new TemplateRecord(new TemplateId(id), List.of(names), RESOURCES, T0, T0);
    }

    private static BuildRecord build(String id, String template, BuildRecord.Status status, Instant at) {
        return new BuildRecord(
                id, new TemplateId(template), status, Optional.empty(), Optional.empty(), List.of("v1"), at, at);
    }

    private static SnapshotRecord snapshot(String id) {
        return new SnapshotRecord(
                new TemplateId(id),
                List.of(),
                Optional.empty(),
                new TemplateId("base"),
                Map.of(),
                RESOURCES,
                new StoredState(new byte[] {1}, Path.of("/tmp/" + id)),
                T0,
                T0,
                "{}",
                GuestDefaults.NONE,
                List.of());
    }

    @Test
    void cached_layers_are_used_replaced_and_evicted_least_recently_used_first() {
        store.putLayer(new TemplateBuildStore.Layer("k1", new TemplateId("layer1")), T0);
        store.putLayer(new TemplateBuildStore.Layer("k2", new TemplateId("layer2")), T0.plusSeconds(1));
        store.putLayer(new TemplateBuildStore.Layer("k3", new TemplateId("layer3")), T0.plusSeconds(2));

        assertThat(store.useLayer("k1", T0.plusSeconds(3))).contains(new TemplateId("layer1"));
        assertThat(store.useLayer("missing", T0.plusSeconds(3))).isEmpty();
        assertThat(store.layersBeyond(1))
                .containsExactly(
                        new TemplateBuildStore.Layer("k2", new TemplateId("layer2")),
                        new TemplateBuildStore.Layer("k3", new TemplateId("layer3")));
        store.putLayer(new TemplateBuildStore.Layer("k2", new TemplateId("layer2b")), T0.plusSeconds(4));
        assertThat(store.layersBeyond(2)).containsExactly(new TemplateBuildStore.Layer("k3", new TemplateId("layer3")));
        assertThat(store.removeLayer("k3")).isTrue();
        assertThat(store.removeLayer("k3")).isFalse();
        assertThat(store.layersBeyond(0)).hasSize(2);
    }

    @Test
    void the_snapshot_list_leaves_out_cached_layers() {
        sandboxes.insertSnapshot(snapshot("usersnapshot"));
        sandboxes.insertSnapshot(snapshot("layersnapshot"));
        store.putLayer(new TemplateBuildStore.Layer("k", new TemplateId("layersnapshot")), T0);

        assertThat(sandboxes
                        .listSnapshots(new SnapshotQuery(Optional.empty(), Optional.empty(), 100, Optional.empty()))
                        .items())
                .extracting(r -> r.id().value())
                .containsExactly("usersnapshot");
        assertThat(sandboxes.findSnapshot("layersnapshot"))
                .as("still found by id, to start builds from")
                .isPresent();
    }

    @Test
    void a_template_is_found_by_id_or_any_name_and_its_names_keep_their_order() {
        assertThat(store.insertTemplate(template("tpl1", "web", "web:v1"))).isTrue();

        assertThat(store.findTemplate("tpl1")).contains(template("tpl1", "web", "web:v1"));
        assertThat(store.findTemplate("web:v1")).contains(template("tpl1", "web", "web:v1"));
        assertThat(store.findTemplate("other")).isEmpty();
    }

    @Test
    void a_name_of_another_template_is_refused_and_nothing_is_written() {
        store.insertTemplate(template("tpl1", "web"));

        assertThat(store.insertTemplate(template("tpl2", "api", "web"))).isFalse();

        assertThat(store.findTemplate("tpl2")).isEmpty();
        assertThat(store.findTemplate("api")).isEmpty();
        assertThat(store.templates()).extracting(TemplateRecord::id).containsExactly(new TemplateId("tpl1"));
    }

    @Test
    void inserting_a_template_again_replaces_its_names_and_resources() {
        store.insertTemplate(template("tpl1", "web"));
        TemplateRecord bigger = new TemplateRecord(
                new TemplateId("tpl1"), List.of("web2"), new Resources(4, 2048, 4096), T0, T0.plusSeconds(5));

        assertThat(store.insertTemplate(bigger)).isTrue();

        assertThat(store.findTemplate("tpl1")).contains(bigger);
        assertThat(store.findTemplate("web")).isEmpty();
    }

    @Test
    void a_build_changes_status_only_from_the_expected_one() {
        store.insertTemplate(template("tpl1", "web"));
        BuildRecord waiting = build("b1", "tpl1", BuildRecord.Status.WAITING, T0);
        store.insertBuild(waiting);
        BuildRecord failed = new BuildRecord(
                "b1",
                waiting.template(),
                BuildRecord.Status.ERROR,
                Optional.of("step 2 exited with 1"),
                Optional.of("2"),
                waiting.tags(),
                T0,
                T0.plusSeconds(9));

        assertThat(store.updateBuild(failed, BuildRecord.Status.BUILDING)).isFalse();
        assertThat(store.build("b1")).contains(waiting);
        assertThat(store.updateBuild(failed, BuildRecord.Status.WAITING)).isTrue();
        assertThat(store.build("b1")).contains(failed);
        assertThat(store.build("nope")).isEmpty();
    }

    @Test
    void builds_are_listed_newest_first_and_unfinished_ones_survive_a_restart() {
        store.insertTemplate(template("tpl1", "web"));
        store.insertBuild(build("b1", "tpl1", BuildRecord.Status.READY, T0));
        store.insertBuild(build("b2", "tpl1", BuildRecord.Status.BUILDING, T0.plusSeconds(1)));
        store.insertBuild(build("b3", "tpl1", BuildRecord.Status.WAITING, T0.plusSeconds(2)));

        assertThat(store.builds(new TemplateId("tpl1")))
                .extracting(BuildRecord::id)
                .containsExactly("b3", "b2", "b1");
        reopen();
        assertThat(store.unfinishedBuilds()).extracting(BuildRecord::id).containsExactly("b2", "b3");
    }

    @Test
    void log_lines_are_paged_by_offset_in_the_order_they_were_written() {
        store.insertTemplate(template("tpl1", "web"));
        store.insertBuild(build("b1", "tpl1", BuildRecord.Status.BUILDING, T0));
        for (int i = 0; i < 5; i++) {
            store.appendLog(
                    "b1",
                    new BuildLogLine(
                            T0.plusMillis(i),
                            i == 4 ? BuildLogLine.Level.ERROR : BuildLogLine.Level.INFO,
                            "line " + i,
                            i == 0 ? Optional.empty() : Optional.of(Integer.toString(i))));
        }

        assertThat(store.logs("b1", 0, 2)).extracting(BuildLogLine::message).containsExactly("line 0", "line 1");
        assertThat(store.logs("b1", 3, 10)).extracting(BuildLogLine::message).containsExactly("line 3", "line 4");
        assertThat(store.logs("b1", 4, 10).getFirst())
                .isEqualTo(new BuildLogLine(T0.plusMillis(4), BuildLogLine.Level.ERROR, "line 4", Optional.of("4")));
        assertThat(store.logs("b1", 5, 10)).isEmpty();
    }

    @Test
    void deleting_a_template_deletes_its_names_builds_and_logs() {
        store.insertTemplate(template("tpl1", "web"));
        store.insertBuild(build("b1", "tpl1", BuildRecord.Status.READY, T0));
        store.appendLog("b1", new BuildLogLine(T0, BuildLogLine.Level.INFO, "done", Optional.empty()));

        assertThat(store.deleteTemplate(new TemplateId("tpl1"))).isTrue();

        assertThat(store.findTemplate("web")).isEmpty();
        assertThat(store.build("b1")).isEmpty();
        assertThat(store.logs("b1", 0, 10)).isEmpty();
        assertThat(store.insertTemplate(template("tpl2", "web"))).isTrue();
        assertThat(store.deleteTemplate(new TemplateId("tpl1"))).isFalse();
    }

    @Test
    void a_builds_snapshot_is_recorded_with_its_status() {
        store.insertTemplate(template("tpl1", "web"));
        BuildRecord building = build("b1", "tpl1", BuildRecord.Status.BUILDING, T0);
        store.insertBuild(building);
        BuildRecord captured = building.withSnapshot(new TemplateId("snap1"), T0.plusSeconds(1));

        assertThat(store.updateBuild(captured, BuildRecord.Status.BUILDING)).isTrue();

        assertThat(store.build("b1")).contains(captured);
        assertThat(store.builds(new TemplateId("tpl1")).getFirst().snapshot()).contains(new TemplateId("snap1"));
    }

    @Test
    void a_tag_names_one_build_moves_when_assigned_again_and_goes_with_it() {
        store.insertTemplate(template("tpl1", "web"));
        store.insertBuild(build("b1", "tpl1", BuildRecord.Status.READY, T0));
        store.insertBuild(build("b2", "tpl1", BuildRecord.Status.READY, T0.plusSeconds(1)));
        TemplateId tpl = new TemplateId("tpl1");
        store.assignTag(new TagAssignment(tpl, "v1", "b1", T0));
        store.assignTag(new TagAssignment(tpl, "stable", "b1", T0));

        store.assignTag(new TagAssignment(tpl, "v1", "b2", T0.plusSeconds(2)));

        assertThat(store.tags(tpl))
                .containsExactly(
                        new TagAssignment(tpl, "stable", "b1", T0),
                        new TagAssignment(tpl, "v1", "b2", T0.plusSeconds(2)));
        assertThat(store.removeTag(tpl, "stable")).isTrue();
        assertThat(store.removeTag(tpl, "stable")).isFalse();
        assertThat(store.deleteTemplate(tpl)).isTrue();
        assertThat(store.tags(tpl)).isEmpty();
    }
}
