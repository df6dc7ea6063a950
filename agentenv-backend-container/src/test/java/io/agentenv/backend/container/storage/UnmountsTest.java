package io.agentenv.backend.container.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** {@link Unmounts#unmount} against a fake {@code umount2} answering with scripted errnos. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class UnmountsTest {

    private static final int EBUSY = 16;
    private static final int EINVAL = 22;
    private static final Path TARGET = Path.of("/run/aenv-test/rootfs");

    private final AtomicInteger calls = new AtomicInteger();

    /** Answers {@code first} for the first {@code times} calls, then {@code then}. */
    private Unmounts.Umount2 answering(int first, int times, int then) {
        return (target, flags) -> {
            assertThat(target).isEqualTo(TARGET);
            assertThat(flags).as("never a lazy detach").isZero();
            return calls.incrementAndGet() <= times ? first : then;
        };
    }

    @Test
    void a_mount_busy_for_a_moment_is_unmounted_by_a_retry() throws Exception {
        assertThat(Unmounts.unmount(TARGET, answering(EBUSY, 2, 0))).isTrue();
        assertThat(calls).hasValue(3);
    }

    @Test
    void a_mount_that_stays_busy_fails_after_a_bounded_number_of_retries() {
        assertThatThrownBy(() -> Unmounts.unmount(TARGET, answering(EBUSY, Integer.MAX_VALUE, 0)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("EBUSY");
        assertThat(calls).hasValue(1 + Unmounts.BUSY_RETRIES);
    }

    @Test
    void nothing_mounted_is_answered_at_once_without_a_retry() throws Exception {
        assertThat(Unmounts.unmount(TARGET, answering(EINVAL, 1, 0))).isFalse();
        assertThat(calls).hasValue(1);
    }
}
