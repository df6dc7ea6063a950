package io.agentenv.backend.container.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.CommandResult;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.host.RecordingProcessRunner;
import io.agentenv.backend.container.host.SlotAddressing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the runc driver calls runc (argv, deadlines, stdio), against a recording fake runner. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RuncRuntimeTest {

    private static final Duration COMMAND = Duration.ofSeconds(7);
    private static final Duration CRIU = Duration.ofSeconds(42);
    private static final ContainerId ID = new ContainerId("sbx-1");

    private final RecordingProcessRunner runner = new RecordingProcessRunner();
    private final HostLayout layout = new HostLayout(
            Path.of("/cache"),
            Path.of("/usr/sbin/runc"),
            Path.of("/cache/criu/sbin/criu"),
            Path.of("/cache/criu-runc.conf"),
            Path.of("/cache/templates"),
            Path.of("/cache/resolv.conf"),
            SlotAddressing.parse("10.200.0.0/16"),
            "aenv",
            "agentenv",
            Path.of("/sys/fs/cgroup"),
            true,
            Path.of("/run/agentenv"));
    private final RuncRuntime runc = new RuncRuntime(runner, layout, COMMAND, CRIU);

    @Test
    void a_list_that_fails_on_a_container_removed_meanwhile_is_taken_again() throws Exception {
        runner.fail(
                        1,
                        "time=\"2026-12-03T06:53:43Z\" level=error msg=\"stat /run/agentenv/runc/sbx-2: no such file or"
                                + " directory\"")
                .succeed("[{\"id\":\"sbx-1\"}]");

        assertThat(runc.list()).containsExactly(ID);
        assertThat(runner.commands()).hasSize(2);
    }

    @Test
    void a_list_that_fails_otherwise_or_too_often_fails() throws Exception {
        runner.fail(1, "permission denied");
        assertThatThrownBy(runc::list).isInstanceOf(CommandFailedException.class);

        for (int i = 0; i < RuncRuntime.LIST_ATTEMPTS; i++) {
            runner.fail(1, "stat /run/agentenv/runc/sbx-" + i + ": no such file or directory");
        }
        assertThatThrownBy(runc::list).isInstanceOf(CommandFailedException.class);
    }

    @Test
    void create_hands_no_pipe_to_the_container_and_logs_runc_errors_to_the_bundle() throws Exception {
        Path bundle = Path.of("/sandboxes/sbx-1/bundle");

        runc.create(ID, bundle);

        Command create = runner.last();
        assertThat(create.argv())
                .containsExactly(
                        "/usr/sbin/runc",
                        "--root",
                        "/run/agentenv/runc",
                        "--log",
                        "/sandboxes/sbx-1/bundle/runc.log",
                        "--log-format",
                        "json",
                        "create",
                        "--bundle",
                        "/sandboxes/sbx-1/bundle",
                        "--pid-file",
                        "/sandboxes/sbx-1/bundle/init.pid",
                        "sbx-1");
        assertThat(create.output()).isEqualTo(Command.Output.DISCARD);
        assertThat(create.timeout()).isEqualTo(COMMAND);
    }

    @Test
    void checkpoint_and_restore_use_the_cached_criu_and_their_own_deadline(@TempDir Path dir) throws Exception {
        RuncRuntime runc = new RuncRuntime(
                runner, layoutWithCgroupsIn(Files.createDirectories(dir.resolve("cgroup"))), COMMAND, CRIU);

        runc.checkpoint(ID, dir.resolve("images"), dir.resolve("work"), RuncRuntime.AfterCheckpoint.LEAVE_RUNNING);
        Command checkpoint = runner.last();
        runc.restore(ID, dir.resolve("bundle"), dir.resolve("images"), dir.resolve("restore"));
        Command restore = runner.last();

        assertThat(checkpoint.argv())
                .containsSubsequence("--criu", "/cache/criu/sbin/criu", "checkpoint", "--leave-running", "sbx-1");
        assertThat(checkpoint.timeout()).isEqualTo(CRIU);
        assertThat(restore.argv())
                .containsSubsequence(
                        "--criu",
                        "/cache/criu/sbin/criu",
                        "restore",
                        "--detach",
                        "--bundle",
                        dir.resolve("bundle").toString(),
                        "--image-path",
                        dir.resolve("images").toString());
        assertThat(restore.timeout()).isEqualTo(CRIU);
        assertThat(restore.output()).isEqualTo(Command.Output.DISCARD);
    }

    @Test
    void restore_runs_runc_in_the_sandboxs_precreated_v1_cgroups_without_shell_strings(@TempDir Path dir)
            throws Exception {
        Path cgroupRoot = dir.resolve("cgroup");
        Files.createDirectories(cgroupRoot.resolve("memory/agentenv"));
        Files.createDirectories(cgroupRoot.resolve("cpuset/agentenv"));
        Files.createDirectories(cgroupRoot.resolve("unified/agentenv"));
        Files.writeString(cgroupRoot.resolve("unified/cgroup.controllers"), "");
        RuncRuntime runc = new RuncRuntime(runner, layoutWithCgroupsIn(cgroupRoot), COMMAND, CRIU);

        runc.restore(ID, dir.resolve("bundle"), dir.resolve("images"), dir.resolve("restore"));

        String cpuset = cgroupRoot.resolve("cpuset/agentenv/sbx-1").toString();
        String memory = cgroupRoot.resolve("memory/agentenv/sbx-1").toString();
        assertThat(runner.last().argv())
                .startsWith(
                        "/bin/sh",
                        "-c",
                        RuncRuntime.JOIN_CGROUPS_AND_EXEC,
                        "join-cgroups",
                        "2",
                        cpuset,
                        memory,
                        "/usr/sbin/runc",
                        "--root",
                        "/run/agentenv/runc");
        assertThat(Path.of(cpuset)).isDirectory();
        assertThat(Path.of(memory)).isDirectory();
        assertThat(cgroupRoot.resolve("unified/agentenv/sbx-1")).doesNotExist();
        assertThat(RuncRuntime.JOIN_CGROUPS_AND_EXEC).doesNotContain("sbx-1", "runc");
    }

    @Test
    void a_failed_restore_removes_the_cgroups_it_created(@TempDir Path dir) throws Exception {
        Path cgroupRoot = dir.resolve("cgroup");
        Files.createDirectories(cgroupRoot.resolve("memory/agentenv"));
        RuncRuntime runc = new RuncRuntime(runner, layoutWithCgroupsIn(cgroupRoot), COMMAND, CRIU);
        runner.fail(1, "criu failed");

        assertThatThrownBy(() -> runc.restore(ID, dir.resolve("bundle"), dir.resolve("images"), dir.resolve("restore")))
                .isInstanceOf(CommandFailedException.class);

        assertThat(cgroupRoot.resolve("memory/agentenv/sbx-1")).doesNotExist();
    }

    @Test
    void a_failed_restore_force_deletes_the_container_and_the_state_dir_runc_left(@TempDir Path dir) throws Exception {
        Path cgroupRoot = dir.resolve("cgroup");
        Files.createDirectories(cgroupRoot.resolve("memory/agentenv"));
        HostLayout layout = new HostLayout(
                Path.of("/cache"),
                Path.of("/usr/sbin/runc"),
                Path.of("/cache/criu/sbin/criu"),
                Path.of("/cache/criu-runc.conf"),
                Path.of("/cache/templates"),
                Path.of("/cache/resolv.conf"),
                SlotAddressing.parse("10.200.0.0/16"),
                "aenv",
                "agentenv",
                cgroupRoot,
                true,
                dir.resolve("run"));
        Path stateDir =
                Files.createDirectories(layout.runcRoot().resolve("sbx-1").resolve("criu-root"));
        Files.writeString(stateDir.resolveSibling("state.json"), "{}");
        RuncRuntime runc = new RuncRuntime(runner, layout, COMMAND, CRIU);
        runner.fail(1, "criu failed").fail(1, "container does not exist");

        assertThatThrownBy(() -> runc.restore(ID, dir.resolve("bundle"), dir.resolve("images"), dir.resolve("restore")))
                .isInstanceOf(CommandFailedException.class);

        assertThat(runner.last().argv()).containsSubsequence("delete", "--force", "sbx-1");
        assertThat(stateDir.getParent()).doesNotExist();
    }

    @Test
    void a_long_log_is_read_from_its_tail_without_the_cut_first_line(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("restore.log");
        Files.writeString(log, "x".repeat(1000) + "\nsecond line\nError (criu/pie-util.c:42): last\n");

        assertThat(RuncLogs.tailLines(log, 60)).containsExactly("second line", "Error (criu/pie-util.c:42): last");
        assertThat(RuncLogs.tailLines(log, 10_000)).hasSize(3);
    }

    private static HostLayout layoutWithCgroupsIn(Path cgroupRoot) {
        return new HostLayout(
                Path.of("/cache"),
                Path.of("/usr/sbin/runc"),
                Path.of("/cache/criu/sbin/criu"),
                Path.of("/cache/criu-runc.conf"),
                Path.of("/cache/templates"),
                Path.of("/cache/resolv.conf"),
                SlotAddressing.parse("10.200.0.0/16"),
                "aenv",
                "agentenv",
                cgroupRoot,
                true,
                Path.of("/run/agentenv"));
    }

    @Test
    void a_stopping_checkpoint_does_not_ask_to_leave_the_container_running(@TempDir Path dir) throws Exception {
        runc.checkpoint(ID, dir.resolve("images"), dir.resolve("work"), RuncRuntime.AfterCheckpoint.STOP);

        assertThat(runner.last().argv()).doesNotContain("--leave-running");
    }

    @Test
    void delete_and_kill_of_a_container_that_is_already_gone_succeed_and_state_is_empty() throws Exception {
        runner.fail(1, "container does not exist")
                .fail(1, "container does not exist")
                .fail(1, "container does not exist");

        runc.delete(ID);
        runc.kill(ID, "KILL");

        assertThat(runc.state(ID)).isEmpty();
        assertThat(runner.commands().getFirst().argv()).containsSubsequence("delete", "--force", "sbx-1");
    }

    @Test
    void other_failures_are_not_swallowed() {
        runner.fail(1, "permission denied");

        assertThatThrownBy(() -> runc.delete(ID))
                .isInstanceOf(CommandFailedException.class)
                .hasMessageContaining("permission denied");
    }

    @Test
    void state_and_list_parse_runcs_json() throws Exception {
        runner.succeed(
                        "{\"ociVersion\":\"1.0.2-dev\",\"id\":\"sbx-1\",\"pid\":4242,\"status\":\"paused\",\"bundle\":\"/b\"}")
                .succeed("[{\"id\":\"sbx-1\"},{\"id\":\"sbx-2\"}]")
                .succeed("null");

        ContainerState state = runc.state(ID).orElseThrow();

        assertThat(state.status()).isEqualTo(ContainerState.Status.PAUSED);
        assertThat(state.pid()).isEqualTo(4242);
        assertThat(runc.list()).containsExactly(ID, new ContainerId("sbx-2"));
        assertThat(runc.list()).isEmpty();
    }

    @Test
    void exec_passes_the_program_and_arguments_untouched() throws Exception {
        runner.succeed("ok\n");

        CommandResult result = runc.exec(ID, List.of("sh", "-c", "echo $HOME; true"), Duration.ofSeconds(3));

        assertThat(result.stdout()).isEqualTo("ok\n");
        assertThat(runner.last().argv()).endsWith("exec", "sbx-1", "sh", "-c", "echo $HOME; true");
        assertThat(runner.last().timeout()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void criu_options_add_tcp_close_external_unix_sockets_ignored_cgroups_to_the_hosts() {
        String options = RuncRuntime.criuOptions("network-lock skip\ntcp-close\n");

        assertThat(options.lines().toList())
                .containsExactly("network-lock skip", "tcp-close", "ext-unix-sk", "manage-cgroups=ignore");
    }

    @Test
    void ignored_cgroups_are_one_token_as_criu_reads_a_separate_one_as_soft_mode() {
        assertThat(RuncRuntime.criuOptions("").lines())
                .contains("manage-cgroups=ignore")
                .doesNotContain("manage-cgroups ignore");
    }
}
