package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The hostname of another UTS namespace set from this JVM, which keeps its own. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class UtsHostnameHostTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private final UtsHostname hostnames = new UtsHostname();
    private Process isolated;

    @BeforeEach
    void startAProcessInItsOwnUtsNamespace() throws Exception {
        // prints its pid once it runs in the new namespace, then waits for its stdin to close
        isolated = new ProcessBuilder("unshare", "--uts", "--fork", "sh", "-c", "echo $$; exec cat")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    @AfterEach
    void stop() throws Exception {
        hostnames.close();
        isolated.getOutputStream().close();
        isolated.destroy();
        assertThat(isolated.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    private long isolatedPid() throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = isolated.getInputStream().read();
                c != '\n';
                c = isolated.getInputStream().read()) {
            if (c < 0) {
                throw new IOException("the isolated process ended before it printed its pid");
            }
            line.append((char) c);
        }
        return Long.parseLong(line.toString().strip());
    }

    private static String hostnameOf(long pid) throws Exception {
        Process p = new ProcessBuilder("nsenter", "--target", Long.toString(pid), "--uts", "hostname").start();
        assertThat(p.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip();
    }

    @Test
    void the_hostname_changes_in_the_target_namespace_only() throws Exception {
        // given
        long pid = isolatedPid();
        String before = ownHostname();
        // when
        hostnames.start(pid, "sbx-0123456789abcdef").await();
        // then
        assertThat(hostnameOf(pid)).isEqualTo("sbx-0123456789abcdef");
        assertThat(ownHostname()).as("this process's namespace is untouched").isEqualTo(before);
    }

    @Test
    void one_thread_serves_requests_back_in_this_process_namespace_after_each() throws Exception {
        // given
        long pid = isolatedPid();
        String before = ownHostname();
        List<Long> others = workerTids(); // other tests' backends may have a worker of their own
        // when
        hostnames.set(pid, "first");
        long worker = workerTid(others);
        hostnames.set(pid, "second");
        // then
        assertThat(hostnameOf(pid)).isEqualTo("second");
        assertThat(workerTid(others)).as("the same thread served both").isEqualTo(worker);
        assertThat(Files.readSymbolicLink(Path.of("/proc/self/task/" + worker + "/ns/uts")))
                .as("the worker waits in this process's UTS namespace")
                .isEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/uts")));
        assertThat(ownHostname()).isEqualTo(before);
    }

    @Test
    void a_failed_request_leaves_the_worker_serving_the_next_and_a_closed_one_refuses() throws Exception {
        // given
        long pid = isolatedPid();
        // when
        List<Long> others = workerTids();
        assertThatThrownBy(() -> hostnames.set(Integer.MAX_VALUE, "nobody")).isInstanceOf(IOException.class);
        hostnames.set(pid, "after-a-failure");
        long worker = workerTid(others);
        hostnames.close();
        // then
        assertThat(hostnameOf(pid)).isEqualTo("after-a-failure");
        assertThatThrownBy(() -> hostnames.start(pid, "late")).isInstanceOf(IllegalStateException.class);
        HostFixture.await("the worker thread ended at close", WAIT, () -> {
            try {
                return !workerTids().contains(worker);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    @Test
    void a_process_that_is_gone_is_an_error_and_bad_names_are_refused() throws Exception {
        // given
        long pid = isolatedPid();
        isolated.getOutputStream().close();
        assertThat(isolated.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        // when / then
        assertThatThrownBy(() -> hostnames.set(pid, "gone"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("ns/uts");
        assertThatThrownBy(() -> hostnames.start(1, "a/b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> hostnames.start(1, "")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> hostnames.start(1, "x".repeat(UtsHostname.MAX_LENGTH + 1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> hostnames.start(0, "ok")).isInstanceOf(IllegalArgumentException.class);
    }

    /** The kernel thread id of the {@code uts-hostname} thread that is not one of {@code others} (exactly one). */
    private static long workerTid(List<Long> others) throws IOException {
        List<Long> tids = new ArrayList<>(workerTids());
        tids.removeAll(others);
        assertThat(tids).hasSize(1);
        return tids.getFirst();
    }

    private static List<Long> workerTids() throws IOException {
        List<Long> tids = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                try {
                    if (Files.readString(task.resolve("comm")).strip().equals("uts-hostname")) {
                        tids.add(Long.parseLong(task.getFileName().toString()));
                    }
                } catch (NoSuchFileException ended) {
                    // a thread that ended while listed
                }
            }
        }
        return tids;
    }

    /** This thread's (this process's) hostname as the kernel reports it, not cached by the JDK. */
    private static String ownHostname() throws IOException {
        return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
    }
}
