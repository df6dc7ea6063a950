package io.agentenv.envd.process;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class NativeSpawnTest {
    private static final Map<String, String> ENV = Map.of("PATH", ProcessService.DEFAULT_PATH);

    private NativeSpawn spawn;

    @BeforeEach
    void load_the_native_launcher() {
        spawn = NativeSpawn.load().orElseThrow(() -> new AssertionError("glibc 2.34+ with native access is required"));
    }

    @AfterEach
    void close_it() {
        spawn.close();
    }

    private record Result(int status, String stdout, String stderr) {}

    private Result run(List<String> argv, Map<String, String> env, Path cwd) throws Exception {
        Process process = spawn.start(argv, env, cwd);
        // both pipes are read at once (as envd's readers do), so neither can fill up and stall the child
        var stderr = java.util.concurrent.CompletableFuture.supplyAsync(() -> readAll(process.getErrorStream()));
        String stdout = new String(process.getInputStream().readAllBytes(), UTF_8);
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).as("exited in time").isTrue();
        return new Result(process.exitValue(), stdout, stderr.get(10, TimeUnit.SECONDS));
    }

    private static String readAll(java.io.InputStream in) {
        try {
            return new String(in.readAllBytes(), UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private Result sh(String script) throws Exception {
        return run(List.of("/bin/sh", "-c", script), ENV, Path.of("/"));
    }

    @Test
    void the_child_leads_its_own_session_and_process_group() throws Exception {
        Process process = spawn.start(
                List.of("/bin/sh", "-c", "read -r _ _ _ _ pgrp sid _ < /proc/$$/stat; echo $pgrp $sid $$"),
                ENV,
                Path.of("/"));
        String out = new String(process.getInputStream().readAllBytes(), UTF_8).strip();
        process.waitFor();
        assertThat(out).isEqualTo(process.pid() + " " + process.pid() + " " + process.pid());
    }

    @Test
    void it_gets_exactly_the_given_environment_and_working_directory(@TempDir Path dir) throws Exception {
        Map<String, String> env = Map.of("ONLY_THIS", "value with spaces and ünïcode", "HOME", "/somewhere");
        Result printed = run(List.of("/usr/bin/env"), env, dir);
        assertThat(printed.stdout().lines().sorted().toList())
                .containsExactly("HOME=/somewhere", "ONLY_THIS=value with spaces and ünïcode");
        assertThat(run(List.of("/bin/pwd", "-P"), ENV, dir).stdout().strip())
                .isEqualTo(dir.toRealPath().toString());
    }

    @Test
    void stdout_and_stderr_are_separate_pipes_and_stdin_is_dev_null() throws Exception {
        Result result = sh("echo out; echo err >&2; readlink /proc/self/fd/0; test -p /proc/self/fd/1 && echo piped");
        assertThat(result.stdout()).isEqualTo("out\n/dev/null\npiped\n");
        assertThat(result.stderr()).isEqualTo("err\n");
        assertThat(result.status()).isZero();
    }

    @Test
    void no_descriptor_of_envd_beyond_the_standard_three_is_inherited() throws Exception {
        try (var held = Files.newInputStream(Path.of("/proc/self/stat"))) {
            // ls opens the directory it lists as the lowest free descriptor, 3
            assertThat(run(List.of("/bin/ls", "/proc/self/fd"), ENV, Path.of("/"))
                            .stdout()
                            .lines()
                            .toList())
                    .containsExactly("0", "1", "2", "3");
        }
    }

    @Test
    void the_child_starts_with_no_blocked_signals_and_no_ignored_standard_signal() throws Exception {
        List<String> status = sh("grep -E '^Sig(Blk|Ign):' /proc/self/status")
                .stdout()
                .lines()
                .toList();
        assertThat(status).hasSize(2);
        assertThat(status.getFirst()).isEqualTo("SigBlk:\t0000000000000000");
        // glibc's posix_spawn leaves its two internal real-time signals (32, 33) ignored, as in the JDK's children
        long ignored = Long.parseUnsignedLong(status.getLast().substring("SigIgn:\t".length()), 16);
        assertThat(ignored & 0x7fffffffL).as("signals 1..31 ignored").isZero();
    }

    @Test
    void exit_codes_are_reported_and_death_by_signal_n_as_128_plus_n() throws Exception {
        assertThat(sh("exit 3").status()).isEqualTo(3);
        assertThat(sh("kill -TERM $$").status()).isEqualTo(128 + 15);
    }

    @Test
    void waiting_with_a_timeout_returns_false_while_the_process_runs() throws Exception {
        Process process = spawn.start(List.of("/bin/sleep", "30"), ENV, Path.of("/"));
        try {
            assertThat(process.waitFor(20, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(process.isAlive()).isTrue();
        } finally {
            process.destroyForcibly();
        }
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isEqualTo(128 + 9);
        assertThat(process.onExit().isDone()).isTrue();
    }

    @Test
    void a_program_that_cannot_start_is_an_error_and_leaves_no_descriptor_open() throws Exception {
        long before = openDescriptors();
        assertThatThrownBy(() -> spawn.start(List.of("/nonexistent/program"), ENV, Path.of("/")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("/nonexistent/program")
                .hasMessageContaining("No such file or directory");
        assertThatThrownBy(() -> spawn.start(List.of("/bin/true"), ENV, Path.of("/nonexistent-dir")))
                .isInstanceOf(IOException.class);
        assertThat(openDescriptors()).isEqualTo(before);
    }

    private static long openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
