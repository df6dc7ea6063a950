package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.guest.EnvdLayout;
import io.agentenv.backend.container.guest.GuestRuntime;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.lifecycle.TemplateImages;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateDescriptor;
import io.agentenv.spi.TemplateId;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the backend reports about its built-in templates (the API's GET /templates shows it). */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerTemplatesHostTest {
    /** An image's preparation: E2B's {@code user} account, with its home, in an image that has no /etc. */
    private static final String PREPARATION = String.join(
            "\n",
            "set -e",
            "mkdir -p /etc /home/user /tmp",
            "echo 'root:x:0:0:root:/root:/bin/sh' >> /etc/passwd",
            "echo 'user:x:1000:1000::/home/user:/bin/sh' >> /etc/passwd",
            "printf 'root:x:0:\\nuser:x:1000:\\n' >> /etc/group",
            "chown 1000:1000 /home/user",
            "");

    @Test
    void base_reports_its_resources_and_when_its_current_build_was_linked() throws Exception {
        try (BackendFixture backend = BackendFixture.create(Map.of())) {
            TemplateDescriptor base = backend.factory.templates().stream()
                    .filter(t -> t.id().value().equals("base"))
                    .findFirst()
                    .orElseThrow();
            Path current = HostLayout.load(HostLayout.DEFAULT_HOST_ENV)
                    .templatesDir()
                    .resolve("base")
                    .resolve("current");

            assertThat(base.builtAt())
                    .contains(Files.getLastModifiedTime(current, LinkOption.NOFOLLOW_LINKS)
                            .toInstant());
            assertThat(base.resources().cpuCount()).isEqualTo(1); // the fixture's cpu_count
            assertThat(base.resources().memoryMiB()).isEqualTo(256);
            assertThat(base.resources().diskSizeMiB()).isGreaterThanOrEqualTo(1024);
            backend.assertNothingLeaked();
        }
    }

    @Test
    void a_lookup_by_id_answers_what_the_listing_holds_for_it_and_nothing_for_unknown_ids() throws Exception {
        try (BackendFixture backend = BackendFixture.create(Map.of())) {
            TemplateDescriptor listed = backend.factory.templates().stream()
                    .filter(t -> t.id().value().equals("base"))
                    .findFirst()
                    .orElseThrow();

            assertThat(backend.factory.template(new TemplateId("base"))).contains(listed);
            assertThat(backend.factory.template(new TemplateId("no-such-template")))
                    .isEmpty();
            backend.assertNothingLeaked();
        }
    }

    @Test
    void a_new_sandbox_keeps_no_trace_of_the_request_warm_up_its_templates_boot_envd_ran() throws Exception {
        try (BackendFixture backend = BackendFixture.create(Map.of())) {
            SecureRandom random = new SecureRandom();
            LaunchSpec spec = new LaunchSpec(
                    SandboxId.random(random),
                    new TemplateId("base"),
                    Map.of(),
                    "user",
                    new AccessToken("tok-" + random.nextInt()),
                    NetworkPolicy.DEFAULT);
            SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(new TemplateId("base")));
            try {
                sandbox.start(Duration.ofSeconds(60));
                EnvdApi envd = sandbox.envd().orElseThrow();

                assertThat(envd.processes()).isEmpty();
                assertThat(envd.logs(0, 1000).entries())
                        .noneMatch(e -> e.source() == EnvdLogEntry.Source.PROCESS)
                        .noneMatch(e -> e.message().contains("process started")
                                || e.message().contains("warm"));
                String files = backend.exec(
                        spec.id(), "sh", "-c", "cat " + EnvdLayout.ENVD_LOG + " " + EnvdLayout.ENVD_JOURNAL + "*");
                assertThat(files)
                        .doesNotContain("process started")
                        .doesNotContain("\"source\":\"process\"")
                        .doesNotContain("warm");
                // the restored envd is the template's boot envd, which was told to warm up
                assertThat(backend.exec(spec.id(), "sh", "-c", "tr '\\0' ' ' </proc/$(pgrep -o -x java)/cmdline"))
                        .contains(String.join(" ", TemplateImages.BOOT_ENVD_ARGS));
            } finally {
                sandbox.close();
            }
            backend.assertNothingLeaked();
        }
    }

    @Test
    void an_empty_image_becomes_a_template_whose_envd_runs_shell_commands(@TempDir Path dir) throws Exception {
        // an image with nothing in it: no libc, no shell, no /etc/passwd, no /tmp
        Path rootfs = Files.createDirectories(dir.resolve("rootfs"));
        TemplateId id = new TemplateId("img-hosttest" + Long.toHexString(new SecureRandom().nextLong() & 0xffffffL));
        Path templateDir =
                HostLayout.load(HostLayout.DEFAULT_HOST_ENV).templatesDir().resolve(id.value());
        try (BackendFixture backend = BackendFixture.create(Map.of())) {
            TemplateDescriptor added = backend.factory.addImageTemplate(id, rootfs, PREPARATION);
            assertThat(backend.factory.template(id)).contains(added);
            assertThat(backend.factory.templates())
                    .as("not listed")
                    .extracting(TemplateDescriptor::id)
                    .doesNotContain(id);
            assertThat(backend.factory.addImageTemplate(id, rootfs, PREPARATION))
                    .as("idempotent")
                    .isEqualTo(added);
            assertThat(backend.factory.reserve(id))
                    .as("no warm sandboxes for an image")
                    .isEmpty();

            SecureRandom random = new SecureRandom();
            LaunchSpec spec = new LaunchSpec(
                    SandboxId.random(random),
                    id,
                    Map.of(),
                    "root",
                    new AccessToken("tok-" + random.nextInt()),
                    NetworkPolicy.DEFAULT);
            SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(id));
            try {
                sandbox.start(Duration.ofSeconds(90));
                StringBuilder out = new StringBuilder();
                GuestCommand.Exit exit = sandbox.envd()
                        .orElseThrow()
                        .run(
                                GuestCommand.shell(
                                        "echo \"$0\"; ls /; id -u", Optional.of("root"), Map.of(), Optional.empty()),
                                into(out));

                assertThat(exit.succeeded()).as(out.toString()).isTrue();
                // bash and sh are missing: envd's own shell ran the command, its applets stand in for the tools
                assertThat(out.toString())
                        .startsWith(GuestRuntime.SHELL + "\n")
                        .contains("opt")
                        .endsWith("0\n");
                // the template's boot envd warmed its request path there too
                assertThat(backend.exec(spec.id(), GuestRuntime.SHELL, "-c", "cat " + EnvdLayout.ENVD_LOG))
                        .contains("envd listening")
                        .doesNotContain("warm-up failed");
                // the boot ran the preparation before envd started: its account is there, and commands run as it
                StringBuilder asUser = new StringBuilder();
                GuestCommand.Exit userExit = sandbox.envd()
                        .orElseThrow()
                        .run(
                                GuestCommand.shell("id -u; pwd", Optional.of("user"), Map.of(), Optional.empty()),
                                into(asUser));
                assertThat(userExit.succeeded()).as(asUser.toString()).isTrue();
                assertThat(asUser.toString()).isEqualTo("1000\n/home/user\n");
                assertThat(backend.exec(spec.id(), GuestRuntime.SHELL, "-c", "ls -a /run/envd"))
                        .as("the preparation is not left in the sandbox")
                        .doesNotContain(EnvdLayout.PREPARATION);
            } finally {
                sandbox.close();
            }
            backend.assertNothingLeaked();
        } finally {
            FileTrees.deleteTree(templateDir);
        }
    }

    @Test
    void an_image_whose_preparation_fails_names_its_exit_and_output(@TempDir Path dir) throws Exception {
        Path rootfs = Files.createDirectories(dir.resolve("rootfs"));
        TemplateId id = new TemplateId("img-hosttest" + Long.toHexString(new SecureRandom().nextLong() & 0xffffffL));
        try (BackendFixture backend = BackendFixture.create(Map.of())) {
            backend.factory.addImageTemplate(id, rootfs, "echo no room for an account >&2\nexit 3\n");
            SecureRandom random = new SecureRandom();
            LaunchSpec spec = new LaunchSpec(
                    SandboxId.random(random),
                    id,
                    Map.of(),
                    "root",
                    new AccessToken("tok-" + random.nextInt()),
                    NetworkPolicy.DEFAULT);

            assertThatThrownBy(() -> {
                        SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(id));
                        try {
                            sandbox.start(Duration.ofSeconds(90));
                        } finally {
                            sandbox.close();
                        }
                    })
                    .isInstanceOf(BackendException.class)
                    .hasMessageContaining("could not be prepared (exit code 3)")
                    .hasMessageContaining("no room for an account");
            backend.assertNothingLeaked();
        }
    }

    /** A command's output, stdout and stderr alike, appended to {@code text}. */
    private static GuestCommand.Output into(StringBuilder text) {
        return new GuestCommand.Output() {
            @Override
            public void stdout(byte[] chunk) {
                text.append(new String(chunk, StandardCharsets.UTF_8));
            }

            @Override
            public void stderr(byte[] chunk) {
                text.append(new String(chunk, StandardCharsets.UTF_8));
            }
        };
    }
}
