package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** {@link ExitWatch} on processes this test starts (pidfds need Linux 5.3+ and native access, which the build grants). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ExitWatchTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void a_running_process_has_not_exited_until_killed_and_stays_exited_once_reaped() throws Exception {
        assertThat(ExitWatch.pidfds()).as("pidfds are available here").isTrue();
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        HostProcess process = HostProcess.of(sleeper.pid()).orElseThrow();
        try (ExitWatch watch = ExitWatch.open(process).orElseThrow()) {
            assertThat(watch.exited()).isFalse();

            sleeper.destroyForcibly();
            sleeper.waitFor(); // the JDK reaps it: the pid may be reused, the pidfd still names the old process

            HostFixture.await("the watch saw the exit", WAIT, () -> {
                try {
                    return watch.exited();
                } catch (java.io.IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(process.exists()).isFalse();
        }
    }

    @Test
    void a_process_that_is_no_longer_in_the_table_cannot_be_watched() throws Exception {
        Process done = new ProcessBuilder("sleep", "60").start();
        HostProcess process = HostProcess.of(done.pid()).orElseThrow();
        done.destroyForcibly().waitFor();

        assertThat(ExitWatch.open(process)).isEmpty();
    }

    @Test
    void a_closed_watch_refuses_to_answer_and_closing_twice_is_harmless() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            ExitWatch watch =
                    ExitWatch.open(HostProcess.of(sleeper.pid()).orElseThrow()).orElseThrow();
            watch.close();
            watch.close();
            assertThatThrownBy(watch::exited)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        } finally {
            sleeper.destroyForcibly().waitFor();
        }
    }
}
