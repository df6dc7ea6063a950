package io.agentenv.envd.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class JitSettlingTest {
    private static final Duration POLL = Duration.ofMillis(20);
    private static final Duration QUIET_FOR = Duration.ofMillis(200);
    private static final long QUIET_NANOS = 1_000_000;

    /** A fake clock moved by the settling's pauses, and a fake compiler that works off a backlog while time passes. */
    private final AtomicLong now = new AtomicLong();

    private final AtomicLong compilerNanos = new AtomicLong();
    /** Compiler CPU still to come: each pause of the settling spends up to 300 us of it. */
    private final AtomicLong backlog = new AtomicLong();

    private final List<Long> backlogAtBatchStart = new ArrayList<>();
    private final List<Long> batchStarts = new ArrayList<>();

    private JitSettling settling(int maxBatches, Duration limit) {
        return new JitSettling(
                compilerNanos::get,
                now::get,
                pause -> {
                    now.addAndGet(pause.toNanos());
                    long step = Math.min(backlog.get(), 300_000);
                    backlog.addAndGet(-step);
                    compilerNanos.addAndGet(step);
                },
                POLL,
                QUIET_FOR,
                QUIET_NANOS,
                maxBatches,
                limit);
    }

    /** A batch that leaves the compiler this much work, one entry per batch (0 once they run out). */
    private JitSettling.Batch batches(long... compileWork) {
        AtomicInteger index = new AtomicInteger();
        return () -> {
            backlogAtBatchStart.add(backlog.get());
            batchStarts.add(now.get());
            int i = index.getAndIncrement();
            backlog.addAndGet(i < compileWork.length ? compileWork[i] : 0);
            now.addAndGet(Duration.ofMillis(500).toNanos());
            return 10;
        };
    }

    @Test
    void batches_run_until_one_leaves_the_compiler_nearly_idle() throws Exception {
        JitSettling.Result result = settling(10, Duration.ofSeconds(30)).run(batches(5_000_000, 2_000_000, 400_000));

        assertThat(result.batches()).isEqualTo(3);
        assertThat(result.settled()).isTrue();
        assertThat(result.requests()).isEqualTo(30);
        assertThat(result.compilerCpu()).containsExactly(5_000_000, 2_000_000, 400_000);
    }

    @Test
    void each_batch_starts_only_after_the_compiler_has_drained_its_queue() throws Exception {
        backlog.set(3_000_000); // the rounds before the settling left work queued

        settling(10, Duration.ofSeconds(30)).run(batches(5_000_000, 0));

        assertThat(backlogAtBatchStart).containsExactly(0L, 0L);
    }

    @Test
    void a_compiler_that_never_settles_stops_at_the_batch_cap() throws Exception {
        JitSettling.Result result =
                settling(3, Duration.ofSeconds(30)).run(batches(2_000_000, 2_000_000, 2_000_000, 2_000_000, 2_000_000));

        assertThat(result.batches()).isEqualTo(3);
        assertThat(result.settled()).isFalse();
    }

    @Test
    void no_batch_starts_after_the_time_limit() throws Exception {
        Duration limit = Duration.ofSeconds(2);

        JitSettling.Result result = settling(100, limit)
                .run(batches(2_000_000, 2_000_000, 2_000_000, 2_000_000, 2_000_000, 2_000_000, 2_000_000));

        // a batch takes ~0.85 s here (0.5 s of rounds, the compiler's 2 ms at 300 us a poll, 200 ms quiet)
        assertThat(result.settled()).isFalse();
        assertThat(result.batches()).isBetween(2, 3);
        assertThat(batchStarts).hasSize(result.batches()).allMatch(start -> start < limit.toNanos());
        assertThat(now.get()).isGreaterThanOrEqualTo(limit.toNanos());
    }

    @Test
    void without_batches_nothing_runs_and_nothing_waits() throws Exception {
        backlog.set(3_000_000);

        JitSettling.Result result = settling(0, Duration.ofSeconds(30)).run(batches(1));

        assertThat(result.batches()).isZero();
        assertThat(backlogAtBatchStart).isEmpty();
        assertThat(now.get()).isZero();
    }

    @Test
    void the_compiler_threads_of_this_jvm_have_used_cpu() {
        // the test JVM has compiled something by now (C1 or C2): /proc/self/task/*/schedstat of its compiler threads
        assertThat(new CompilerThreads().cpuNanos()).isPositive();
    }
}
