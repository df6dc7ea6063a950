package io.agentenv.envd.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class DeferredSetUpsTest {
    @Test
    void the_warm_up_starts_the_native_spawn_set_up_and_completes_when_it_has_run() throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        CountDownLatch spawnSetUp = new CountDownLatch(1);

        DeferredSetUps.startInBackground(Duration.ZERO, done, spawnSetUp::countDown);

        done.get(30, TimeUnit.SECONDS);
        assertThat(spawnSetUp.getCount()).isZero();
    }

    @Test
    void nothing_starts_before_the_delay() throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        CountDownLatch spawnSetUp = new CountDownLatch(1);

        DeferredSetUps.startInBackground(Duration.ofHours(1), done, spawnSetUp::countDown);

        assertThat(spawnSetUp.await(200, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(done).isNotDone();
    }
}
