package io.agentenv.envd.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class UnixSocketRelayTest {

    @Test
    void an_accept_that_keeps_failing_is_retried_with_growing_pauses_not_in_a_busy_loop() throws Exception {
        AtomicBoolean open = new AtomicBoolean(true);
        AtomicInteger attempts = new AtomicInteger();
        CountDownLatch sixth = new CountDownLatch(1);
        UnixSocketRelay.Accepting failing = () -> {
            if (!open.get()) {
                throw new ClosedChannelException();
            }
            if (attempts.incrementAndGet() == 6) {
                sixth.countDown();
            }
            throw new IOException("Too many open files");
        };
        long started = System.nanoTime();
        Thread loop = Thread.ofVirtual()
                .start(() -> UnixSocketRelay.acceptUntilClosed(
                        failing, open::get, client -> {}, Path.of("/test/envd.sock")));

        assertThat(sixth.await(30, TimeUnit.SECONDS)).isTrue();
        long elapsed = System.nanoTime() - started;
        open.set(false);
        loop.interrupt();
        loop.join(Duration.ofSeconds(10));

        // five pauses before the sixth attempt: 10 + 20 + 40 + 80 + 160 ms at least (a busy loop takes microseconds)
        assertThat(Duration.ofNanos(elapsed)).isGreaterThanOrEqualTo(Duration.ofMillis(310));
        assertThat(loop.isAlive()).isFalse();
    }

    @Test
    void connections_accepted_between_failures_are_handed_on_and_the_loop_ends_on_close() throws Exception {
        AtomicBoolean open = new AtomicBoolean(true);
        AtomicInteger attempts = new AtomicInteger();
        AtomicInteger handedOn = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(1);
        UnixSocketRelay.Accepting flaky = () -> {
            int attempt = attempts.incrementAndGet();
            if (attempt > 6) {
                open.set(false);
                done.countDown();
                throw new ClosedChannelException();
            }
            if (attempt % 2 == 0) {
                return SocketChannel.open(); // an unconnected channel stands in for an accepted one
            }
            throw new IOException("transient");
        };
        Thread loop = Thread.ofVirtual()
                .start(() -> UnixSocketRelay.acceptUntilClosed(
                        flaky,
                        open::get,
                        client -> {
                            handedOn.incrementAndGet();
                            try {
                                client.close();
                            } catch (IOException e) {
                                throw new IllegalStateException(e);
                            }
                        },
                        Path.of("/test/envd.sock")));

        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        loop.join(Duration.ofSeconds(10));

        assertThat(handedOn).hasValue(3);
        assertThat(loop.isAlive()).isFalse();
    }
}
