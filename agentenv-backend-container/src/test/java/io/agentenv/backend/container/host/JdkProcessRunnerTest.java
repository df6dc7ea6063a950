package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class JdkProcessRunnerTest {

    private static final Duration SHORT = Duration.ofSeconds(10);
    private final ProcessRunner runner = new JdkProcessRunner();

    @Test
    void a_successful_program_returns_its_stdout_and_stderr_separately() throws Exception {
        CommandResult result = runner.run(Command.of(SHORT, "sh", "-c", "echo out; echo err >&2"));

        assertThat(result.stdout()).isEqualTo("out\n");
        assertThat(result.stderr()).isEqualTo("err\n");
        assertThat(result.took()).isPositive();
    }

    @Test
    void arguments_are_passed_as_an_array_and_never_interpreted_by_a_shell() throws Exception {
        CommandResult result = runner.run(Command.of(SHORT, "echo", "$HOME; rm -rf /", "`id`"));

        assertThat(result.stdout()).isEqualTo("$HOME; rm -rf / `id`\n");
    }

    @Test
    void stdin_bytes_reach_the_program() throws Exception {
        CommandResult result =
                runner.run(Command.of(SHORT, "cat").withStdin("hello\n".getBytes(StandardCharsets.UTF_8)));

        assertThat(result.stdout()).isEqualTo("hello\n");
    }

    @Test
    void a_non_zero_exit_is_a_typed_failure_carrying_the_exit_code_and_stderr_tail() {
        assertThatThrownBy(() -> runner.run(Command.of(SHORT, "sh", "-c", "echo 'no such thing' >&2; exit 3")))
                .isInstanceOfSatisfying(CommandFailedException.class, e -> {
                    assertThat(e.reason()).isEqualTo(CommandFailedException.Reason.EXITED_NONZERO);
                    assertThat(e.exitCode()).hasValue(3);
                    assertThat(e.stderrTail()).contains("no such thing");
                    assertThat(e.getMessage()).contains("exited with status 3").contains("no such thing");
                });
    }

    @Test
    void a_missing_program_is_reported_as_not_started() {
        assertThatThrownBy(() -> runner.run(Command.of(SHORT, "/nonexistent/program")))
                .isInstanceOfSatisfying(
                        CommandFailedException.class,
                        e -> assertThat(e.reason()).isEqualTo(CommandFailedException.Reason.NOT_STARTED));
    }

    @Test
    void a_program_past_its_deadline_is_killed_with_its_children() {
        Instant started = Instant.now();

        assertThatThrownBy(
                        () -> runner.run(Command.of(Duration.ofMillis(300), "sh", "-c", "sleep 30 & sleep 30; wait")))
                .isInstanceOfSatisfying(
                        CommandFailedException.class,
                        e -> assertThat(e.reason()).isEqualTo(CommandFailedException.Reason.TIMED_OUT));
        assertThat(Duration.between(started, Instant.now())).isLessThan(Duration.ofSeconds(10));
        assertThat(ProcessHandle.current()
                        .descendants()
                        .filter(p -> p.info().command().orElse("").endsWith("sleep")))
                .isEmpty();
    }

    @Test
    void large_output_is_drained_so_the_program_never_blocks_on_a_full_pipe() throws Exception {
        CommandResult result = runner.run(Command.of(SHORT, "head", "-c", "5000000", "/dev/zero"));

        assertThat(result.stdout()).hasSize(5_000_000);
    }

    @Test
    void discarded_output_does_not_wait_for_a_background_child_holding_stdio(@TempDir Path dir) throws Exception {
        Path pidFile = dir.resolve("child.pid");
        Instant started = Instant.now();

        CommandResult result = runner.run(
                Command.of(SHORT, "sh", "-c", "sleep 30 & echo $! > \"$0\"; echo detached", pidFile.toString())
                        .discardingOutput());

        assertThat(result.stdout()).isEmpty();
        assertThat(Duration.between(started, Instant.now())).isLessThan(Duration.ofSeconds(4));
        ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip())).ifPresent(ProcessHandle::destroyForcibly);
    }

    @Test
    void a_command_needs_a_program_and_a_positive_timeout() {
        assertThatThrownBy(() -> Command.of(SHORT)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Command.of(Duration.ZERO, "true")).isInstanceOf(IllegalArgumentException.class);
    }
}
