package io.agentenv.envd.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessSelector;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ProcessTableTest {
    private static final Duration RETENTION = Duration.ofMinutes(5);

    /** A clock the test moves by hand. */
    private static final class ManualClock extends Clock {
        private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-29T12:00:00Z"));

        void advance(Duration by) {
            now.updateAndGet(t -> t.plus(by));
        }

        @Override
        public Instant instant() {
            return now.get();
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }
    }

    private final ManualClock clock = new ManualClock();
    private final ProcessTable table = new ProcessTable(clock, RETENTION);

    /** A child around a fake process that has no output; {@code exit} ends it. */
    private ChildProcess child(SpawnedProcess process) {
        ChildProcess child = new ChildProcess(
                ChildProcess.Kind.PIPES,
                process,
                task -> Thread.ofVirtual().start(task),
                ProcessConfig.newBuilder().setCmd("/bin/true").build(),
                Optional.empty(),
                false,
                new PosixSignals(Optional.empty()),
                new LogJournal(clock, 1 << 16),
                clock);
        table.add(child);
        child.start(Optional.empty());
        return child;
    }

    private static SpawnedProcess fakeProcess(long pid) {
        return new SpawnedProcess(
                pid, OutputStream.nullOutputStream(), InputStream.nullInputStream(), InputStream.nullInputStream());
    }

    private static ProcessSelector pid(long pid) {
        return ProcessSelector.newBuilder().setPid((int) pid).build();
    }

    private static void awaitEnd(ChildProcess child) throws Exception {
        java.util.concurrent.CompletableFuture<ChildProcess> ended = new java.util.concurrent.CompletableFuture<>();
        child.whenEnded(ended::complete);
        ended.get(5, TimeUnit.SECONDS);
    }

    @Test
    void the_exit_is_in_the_journal_before_the_end_listeners_run() throws Exception {
        LogJournal journal = new LogJournal(clock, 1 << 16);
        SpawnedProcess process = fakeProcess(4343);
        ChildProcess child = new ChildProcess(
                ChildProcess.Kind.PIPES,
                process,
                task -> Thread.ofVirtual().start(task),
                ProcessConfig.newBuilder().setCmd("/bin/true").build(),
                Optional.empty(),
                false,
                new PosixSignals(Optional.empty()),
                journal,
                clock);
        java.util.concurrent.CompletableFuture<java.util.List<String>> seenAtEnd =
                new java.util.concurrent.CompletableFuture<>();
        child.whenEnded(
                ended -> seenAtEnd.complete(journal.read(0, 100, java.util.OptionalInt.empty()).entries().stream()
                        .map(LogJournal.Entry::message)
                        .toList()));
        child.start(Optional.empty());
        process.exited(3);

        assertThat(seenAtEnd.get(5, TimeUnit.SECONDS))
                .anySatisfy(message -> assertThat(message).startsWith("exited: "));
    }

    @Test
    void an_exited_process_is_kept_for_the_retention_and_then_forgotten() throws Exception {
        SpawnedProcess process = fakeProcess(4242);
        ChildProcess child = child(process);
        process.exited(0);
        awaitEnd(child);

        clock.advance(RETENTION.minusSeconds(1));
        assertThat(table.find(pid(4242))).containsSame(child);
        clock.advance(Duration.ofSeconds(1));
        assertThat(table.find(pid(4242))).isEmpty();
    }

    @Test
    void a_running_process_is_never_evicted_and_processes_leave_in_the_order_they_ended() throws Exception {
        SpawnedProcess runningProcess = fakeProcess(1);
        ChildProcess running = child(runningProcess);
        SpawnedProcess firstProcess = fakeProcess(2);
        ChildProcess first = child(firstProcess);
        SpawnedProcess secondProcess = fakeProcess(3);
        ChildProcess second = child(secondProcess);
        firstProcess.exited(0);
        awaitEnd(first);
        clock.advance(Duration.ofMinutes(1));
        secondProcess.exited(0);
        awaitEnd(second);

        clock.advance(RETENTION.minusSeconds(30)); // the first ended 5.5 minutes ago, the second 4.5
        assertThat(table.find(pid(2))).isEmpty();
        assertThat(table.find(pid(3))).containsSame(second);
        clock.advance(Duration.ofHours(1));
        assertThat(table.find(pid(3))).isEmpty();
        assertThat(table.running()).containsExactly(running);
        runningProcess.exited(0);
    }

    @Test
    void an_exited_process_can_be_forgotten_before_its_retention_but_a_running_one_cannot() throws Exception {
        SpawnedProcess exitedProcess = fakeProcess(11);
        ChildProcess exited = child(exitedProcess);
        SpawnedProcess runningProcess = fakeProcess(12);
        child(runningProcess);
        exitedProcess.exited(0);
        awaitEnd(exited);

        assertThat(table.forgetExited(11)).isTrue();
        assertThat(table.forgetExited(12)).isFalse();
        assertThat(table.forgetExited(13)).isFalse();
        assertThat(table.find(pid(11))).isEmpty();
        assertThat(table.pids()).containsExactly(12L);
        clock.advance(RETENTION.plusSeconds(1)); // the forgotten one is not evicted a second time
        assertThat(table.pids()).containsExactly(12L);
        runningProcess.exited(0);
    }

    @Test
    void a_newer_process_that_reused_the_pid_of_an_evicted_one_stays() throws Exception {
        SpawnedProcess oldProcess = fakeProcess(77);
        ChildProcess old = child(oldProcess);
        oldProcess.exited(0);
        awaitEnd(old);
        SpawnedProcess newProcess = fakeProcess(77);
        ChildProcess reused = child(newProcess);

        clock.advance(RETENTION.plusSeconds(1));
        assertThat(table.find(pid(77))).containsSame(reused);
        newProcess.exited(0);
    }
}
