package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.mock.FakeEnvd;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.Resources;
import io.agentenv.spi.TemplateId;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * COPY steps of template builds over the mock backend: the archive written into the build sandbox through envd, the
 * script run as root in the WORKDIR, and the failures (no upload, an upload that fails its check, bad arguments, a
 * failing script). What the script does to files is {@link CopyScriptTest}'s.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CopyStepTest {
    private static final Resources RESOURCES = new Resources(2, 512, 1024);
    private static final String HASH = "ab".repeat(32);
    private static final byte[] TAR = "a gzipped tar".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    OrchestratorHarness h;
    SandboxGuests guests;
    MemoryTemplateBuildStore store;
    TemplateBuilder builder;
    /** The uploads by template and hash; a value of null stands for one that fails its check. */
    final Map<String, Optional<TemplateFiles.Archive>> uploads = new ConcurrentHashMap<>();

    @BeforeEach
    void start() {
        h = new OrchestratorHarness(dir);
        guests = new SandboxGuests(h.orchestrator, GuestSettings.defaults(), h.clock);
        store = new MemoryTemplateBuildStore();
        TemplateFiles files = new TemplateFiles() {
            @Override
            public Optional<TemplateFiles.Archive> archive(TemplateId template, String hash) {
                Optional<TemplateFiles.Archive> archive = uploads.get(template.value() + "/" + hash);
                if (archive == null) {
                    return Optional.empty();
                }
                return Optional.of(archive.orElseThrow(() ->
                        AgentEnvException.invalidArgument("archive member '../etc/passwd' leaves its directory")));
            }

            @Override
            public void deleteAll(TemplateId template) {
                uploads.keySet().removeIf(k -> k.startsWith(template.value() + "/"));
            }
        };
        builder = new TemplateBuilder(
                h.orchestrator, guests, store, ImageSource.none(), files, "user", h.clock, Runnable::run);
    }

    @AfterEach
    void stop() {
        builder.close();
        guests.close();
        h.close();
    }

    private static TemplateBuilder.Step copy(String... args) {
        return new TemplateBuilder.Step("COPY", List.of(args), Optional.of(HASH), false);
    }

    private static TemplateBuilder.Step step(String type, String... args) {
        return new TemplateBuilder.Step(type, List.of(args), Optional.empty(), false);
    }

    private void uploaded(TemplateId template, boolean gzip) {
        uploads.put(
                template.value() + "/" + HASH,
                Optional.of(new TemplateFiles.Archive(TAR.length, gzip, () -> new ByteArrayInputStream(TAR))));
    }

    private TemplateBuilder.Status build(TemplateBuilder.Requested requested, TemplateBuilder.Step... steps) {
        builder.start(
                requested.template().id(),
                requested.build().id(),
                new TemplateBuilder.BuildSpec(
                        Optional.of("base"),
                        Optional.empty(),
                        Optional.empty(),
                        List.of(steps),
                        Optional.empty(),
                        Optional.empty(),
                        false));
        TemplateBuilder.Status status =
                builder.status(requested.template().id(), requested.build().id(), 0);
        assertThat(status.build().status().finished()).isTrue();
        return status;
    }

    private FakeEnvd buildEnvd() {
        MockSandbox instance = h.backend.instances().getFirst();
        return instance.fakeEnvd();
    }

    @Test
    void the_archive_goes_to_tmp_and_the_script_runs_as_root_in_the_workdir() {
        TemplateBuilder.Requested requested = builder.request(Optional.of("copied"), List.of(), RESOURCES);
        uploaded(requested.template().id(), true);

        TemplateBuilder.Status status = build(
                requested,
                step("WORKDIR", "/srv"),
                step("USER", "www"),
                step("ENV", "MODE", "prod"),
                copy("dir", "app/", "", "0755"));

        assertThat(status.build().status()).as(status.logs().toString()).isEqualTo(BuildRecord.Status.READY);
        String tar = "/tmp/aenv-copy-" + requested.build().id() + "-4.tar";
        assertThat(buildEnvd().uploads()).singleElement().satisfies(upload -> {
            assertThat(upload.path()).isEqualTo(tar);
            assertThat(upload.user()).contains("root");
            assertThat(upload.content()).isEqualTo(TAR);
        });
        GuestCommand script = buildEnvd().ran().getLast();
        assertThat(script.user()).contains("root");
        assertThat(script.cwd()).contains("/srv");
        assertThat(script.env()).containsEntry("MODE", "prod");
        assertThat(script.args().getLast())
                .contains("archive='" + tar + "'")
                .contains("tar -xzf \"$archive\" -C \"$work/files\"")
                .contains("src=\"$work/files\"/'dir'")
                .contains("dest='app/'")
                .contains("owner='www:'")
                .contains("mode='0755'")
                .contains("from=$(pwd)")
                .doesNotContain("getent");
        assertThat(status.logs())
                .filteredOn(l -> l.step().equals(Optional.of("4")))
                .extracting(BuildLogLine::message)
                .contains("COPY dir app/");
    }

    @Test
    void the_step_user_owns_the_files_and_dest_is_from_the_user_home_without_workdir() {
        TemplateBuilder.Requested requested = builder.request(Optional.empty(), List.of(), RESOURCES);
        uploaded(requested.template().id(), false);

        TemplateBuilder.Status status = build(requested, copy("*.txt", "notes", "root:adm", ""));

        assertThat(status.build().status()).as(status.logs().toString()).isEqualTo(BuildRecord.Status.READY);
        GuestCommand script = buildEnvd().ran().getLast();
        assertThat(script.cwd()).isEmpty();
        assertThat(script.args().getLast())
                .contains("tar -xf \"$archive\"")
                .contains("src=\"$work/files\"\n")
                .contains("owner='root:adm'")
                .contains("mode=''")
                .contains("getent passwd 'user'");
        assertThat(status.logs()).extracting(BuildLogLine::message).contains("COPY *.txt notes (as root:adm)");
    }

    @Test
    void a_missing_upload_fails_the_build_naming_the_step_and_the_hash() {
        TemplateBuilder.Requested requested = builder.request(Optional.of("nofiles"), List.of(), RESOURCES);

        TemplateBuilder.Status status = build(requested, step("RUN", "true"), copy("a.txt", "/a.txt"));

        assertThat(status.build().status()).isEqualTo(BuildRecord.Status.ERROR);
        assertThat(status.build().step()).contains("2");
        assertThat(status.build().reason())
                .contains("step 2 (COPY a.txt /a.txt): no files were uploaded for hash " + HASH);
        assertThat(buildEnvd().uploads()).isEmpty();
        assertThat(buildEnvd().ran()).hasSize(1);
        assertThat(h.orchestrator.findTemplate("nofiles")).isEmpty();
        assertThat(h.store.all()).as("the build sandbox is killed").isEmpty();
    }

    @Test
    void an_upload_with_a_bad_member_name_fails_before_it_reaches_the_sandbox() {
        TemplateBuilder.Requested requested = builder.request(Optional.empty(), List.of(), RESOURCES);
        uploads.put(requested.template().id().value() + "/" + HASH, Optional.empty());

        TemplateBuilder.Status status = build(requested, copy("etc", "/etc"));

        assertThat(status.build().status()).isEqualTo(BuildRecord.Status.ERROR);
        assertThat(status.build().reason())
                .hasValueSatisfying(r -> assertThat(r)
                        .startsWith("step 1 (COPY etc /etc): the files uploaded for hash " + HASH + " cannot be used")
                        .contains("'../etc/passwd' leaves its directory"));
        assertThat(buildEnvd().uploads()).isEmpty();
        assertThat(buildEnvd().ran()).isEmpty();
    }

    @Test
    void uploads_of_another_template_are_not_used() {
        TemplateBuilder.Requested other = builder.request(Optional.of("other"), List.of(), RESOURCES);
        uploaded(other.template().id(), true);
        TemplateBuilder.Requested requested = builder.request(Optional.of("mine"), List.of(), RESOURCES);

        TemplateBuilder.Status status = build(requested, copy("a", "/a"));

        assertThat(status.build().reason())
                .hasValueSatisfying(r -> assertThat(r).contains("no files were uploaded"));
    }

    @Test
    void bad_arguments_fail_the_step_before_anything_runs() {
        for (List<String> args : List.of(
                List.of("a", "/a", "", "u+x"),
                List.of("a", "/a", "-R", ""),
                List.of("/etc/passwd", "/a"),
                List.of("../secret", "/a"),
                List.of("a"))) {
            TemplateBuilder.Requested requested = builder.request(Optional.empty(), List.of(), RESOURCES);
            uploaded(requested.template().id(), true);

            TemplateBuilder.Status status =
                    build(requested, new TemplateBuilder.Step("COPY", args, Optional.of(HASH), false));

            assertThat(status.build().status()).as(args.toString()).isEqualTo(BuildRecord.Status.ERROR);
            assertThat(status.build().reason())
                    .as(args.toString())
                    .hasValueSatisfying(r -> assertThat(r).startsWith("step 1"));
        }
        assertThat(h.backend.instances())
                .allSatisfy(i -> assertThat(i.fakeEnvd().uploads()).isEmpty());
    }

    @Test
    void a_failing_script_fails_the_build_with_its_output_and_exit_code() {
        h.backend.onPrepare(instance -> instance.fakeEnvd().commands((command, output) -> {
            output.stderr("/srv/app is not a directory\n".getBytes(StandardCharsets.UTF_8));
            return new GuestCommand.Exit(1, true, "exit status 1");
        }));
        TemplateBuilder.Requested requested = builder.request(Optional.empty(), List.of(), RESOURCES);
        uploaded(requested.template().id(), true);

        TemplateBuilder.Status status = build(requested, copy("dir", "/srv/app"));

        assertThat(status.build().reason()).contains("step 1 (COPY dir /srv/app) exited with code 1");
        assertThat(status.logs()).extracting(BuildLogLine::message).contains("/srv/app is not a directory");
    }

    @Test
    void the_source_names_the_part_before_its_first_wildcard() {
        assertThat(CopyStep.sourceBase("file.txt")).contains("file.txt");
        assertThat(CopyStep.sourceBase("dir/")).contains("dir");
        assertThat(CopyStep.sourceBase("./dir/sub")).contains("dir/sub");
        assertThat(CopyStep.sourceBase("src/*.js")).contains("src");
        assertThat(CopyStep.sourceBase("src/**/x/*.js")).contains("src");
        assertThat(CopyStep.sourceBase("*.txt")).contains("");
        assertThat(CopyStep.sourceBase(".")).contains("");
        assertThat(CopyStep.sourceBase("/etc/passwd")).isEmpty();
        assertThat(CopyStep.sourceBase("a/../../b")).isEmpty();
    }
}
