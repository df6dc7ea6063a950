package io.agentenv.sdk;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How to fork a running sandbox ({@link Sandbox#fork}): how many children (copies of its memory and filesystem) and
 * their timeout.
 *
 * @param count   children, 1..100
 * @param timeout the children's timeout (empty: the server's default)
 */
public record ForkOptions(int count, Optional<Duration> timeout) {
    /** Checks the fields. */
    public ForkOptions {
        if (count < 1 || count > 100) {
            throw new InvalidArgumentException("count must be 1..100: " + count);
        }
        Objects.requireNonNull(timeout, "timeout");
        timeout.ifPresent(CreateOptions::checkTimeout);
    }

    /** {@code count} children with the default timeout. */
    public static ForkOptions of(int count) {
        return new ForkOptions(count, Optional.empty());
    }

    /** {@code count} children with {@code timeout}. */
    public static ForkOptions of(int count, Duration timeout) {
        return new ForkOptions(count, Optional.of(timeout));
    }
}
