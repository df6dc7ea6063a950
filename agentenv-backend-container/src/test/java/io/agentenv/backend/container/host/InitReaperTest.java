package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link InitReaper} with orphans this test makes: a shell started by the JDK starts a program in the background and
 * exits, so the program (a short sleep, so the shell is gone first) is adopted by this JVM (the subreaper) and, once
 * it exits, is a zombie the JDK never waits
 * for. The background sweep runs hourly here, so each test sweeps itself.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class InitReaperTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final long SELF = ProcessHandle.current().pid();

    @TempDir
    Path dir;

    private InitReaper reaper;

    @BeforeEach
    void enable() {
        reaper = InitReaper.enable(Duration.ofHours(1), Duration.ZERO); // sweeps run by the tests themselves
    }

    @AfterEach
    void close() throws InterruptedException {
        reaper.close();
    }

    /** Starts {@code program args} as an orphan of this JVM and returns it once it is a zombie child of this JVM. */
    private static HostProcess zombieOrphan(String program, String... args) throws Exception {
        List<String> command =
                new ArrayList<>(List.of("sh", "-c", "\"$0\" \"$@\" </dev/null >/dev/null 2>&1 & echo $!", program));
        command.addAll(List.of(args));
        Process shell = new ProcessBuilder(command).start();
        long pid = Long.parseLong(new String(shell.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
        shell.waitFor();
        HostProcess orphan = HostProcess.of(pid).orElseThrow();
        HostFixture.await("the orphan is a zombie child of this JVM", WAIT, () -> {
            try {
                return orphan.zombie() && orphan.parentPid() == SELF;
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        });
        return orphan;
    }

    @Test
    void an_orphan_is_reaped_at_the_second_sweep_that_finds_it_a_zombie() throws Exception {
        HostProcess orphan = zombieOrphan("sleep", "0.1");

        reaper.sweep();
        assertThat(orphan.exists())
                .as("left for one sweep: it could be the JDK's own child")
                .isTrue();
        reaper.sweep();

        assertThat(orphan.exists()).isFalse();
    }

    @Test
    void a_zombie_younger_than_the_orphan_grace_is_left_however_many_sweeps_find_it() throws Exception {
        reaper.close();
        reaper = InitReaper.enable(Duration.ofHours(1), Duration.ofMillis(300));
        HostProcess orphan = zombieOrphan("sleep", "0.1");
        long firstSweep = System.nanoTime();

        for (int i = 0; i < 5; i++) {
            reaper.sweep();
        }
        if (System.nanoTime() - firstSweep < Duration.ofMillis(300).toNanos()) {
            assertThat(orphan.exists())
                    .as("a JDK child whose reaper thread is late looks like this")
                    .isTrue();
        }
        HostFixture.await("the orphan is reaped once older than the grace", WAIT, () -> {
            try {
                reaper.sweep();
                return !orphan.exists();
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void a_container_init_is_reaped_at_the_first_sweep_and_by_reap() throws Exception {
        Path tini = dir.resolve("tini");
        Files.copy(Path.of("/bin/sleep"), tini);
        tini.toFile().setExecutable(true);
        HostProcess swept = zombieOrphan(tini.toString(), "0.1");
        HostProcess closed = zombieOrphan(tini.toString(), "0.1");

        assertThat(reaper.reap(closed)).isTrue();
        assertThat(closed.exists()).isFalse();
        reaper.sweep();
        assertThat(swept.exists()).isFalse();
    }

    @Test
    void several_zombies_are_all_reaped_by_two_sweeps() throws Exception {
        List<HostProcess> orphans = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            orphans.add(zombieOrphan("sleep", "0.1"));
        }

        reaper.sweep();
        reaper.sweep();

        for (HostProcess orphan : orphans) {
            assertThat(orphan.exists()).as("orphan %d", orphan.pid()).isFalse();
        }
    }

    @Test
    void the_background_sweep_never_takes_the_exit_status_of_a_process_the_jdk_started() throws Exception {
        reaper.close();
        reaper = InitReaper.enable(
                Duration.ofMillis(20), Duration.ofSeconds(2)); // sweeps far more often than the server does

        for (int i = 0; i < 30; i++) {
            Process child = new ProcessBuilder("sh", "-c", "exit 7").start();
            assertThat(child.waitFor()).as("exit status of run %d", i).isEqualTo(7);
        }
        HostProcess orphan = zombieOrphan("sleep", "0.1");
        HostFixture.await("the background sweep reaped the orphan", WAIT, () -> {
            try {
                return !orphan.exists();
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }
}
