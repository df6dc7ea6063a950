package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
    private Process isolated;

    @BeforeEach
    void startAProcessInItsOwnUtsNamespace() throws Exception {
        // prints its pid once it runs in the new namespace, then waits for its stdin to close
        isolated = new ProcessBuilder("unshare", "--uts", "--fork", "sh", "-c", "echo $$; exec cat")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    @AfterEach
    void stop() throws Exception {
        isolated.getOutputStream().close();
        isolated.destroy();
        assertThat(isolated.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    private long isolatedPid() throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = isolated.getInputStream().read(); c != '\n'; c = isolated.getInputStream().read()) {
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
        UtsHostname.start(pid, "sbx-0123456789abcdef").await();
        // then
        assertThat(hostnameOf(pid)).isEqualTo("sbx-0123456789abcdef");
        assertThat(ownHostname()).as("this process's namespace is untouched").isEqualTo(before);
    }

    @Test
    void a_process_that_is_gone_is_an_error_and_bad_names_are_refused() throws Exception {
        // given
        long pid = isolatedPid();
        isolated.getOutputStream().close();
        assertThat(isolated.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        // when / then
        assertThatThrownBy(() -> UtsHostname.set(pid, "gone")).isInstanceOf(IOException.class).hasMessageContaining("ns/uts");
        assertThatThrownBy(() -> UtsHostname.start(1, "a/b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> UtsHostname.start(1, "")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> UtsHostname.start(1, "x".repeat(UtsHostname.MAX_LENGTH + 1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> UtsHostname.start(0, "ok")).isInstanceOf(IllegalArgumentException.class);
    }

    /** This thread's (this process's) hostname as the kernel reports it, not cached by the JDK. */
    private static String ownHostname() throws IOException {
        return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
    }
}
