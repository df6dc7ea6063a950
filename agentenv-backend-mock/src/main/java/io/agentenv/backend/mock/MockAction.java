package io.agentenv.backend.mock;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import java.time.Duration;

/** What the next call of one {@link MockOp} does. Unscripted calls succeed. */
public sealed interface MockAction {
    /** Proceed normally. */
    record Succeed() implements MockAction {}

    /** Throw {@code error} without changing the instance (Terminal marks the instance broken). */
    record Fail(BackendException error) implements MockAction {
        public Fail {
            requireNonNull(error, "error is null");
        }
    }

    /** Take {@code delay} of wall-clock time, then proceed (for end-to-end runs; tests use {@link Hold}). */
    record Delay(Duration delay) implements MockAction {
        public Delay {
            requireNonNull(delay, "delay is null");
            if (delay.isNegative()) {
                throw new IllegalArgumentException("delay is negative");
            }
        }
    }

    /** Block at {@code gate} until the test releases it, then run {@code then}. */
    record Hold(Gate gate, MockAction then) implements MockAction {
        public Hold {
            requireNonNull(gate, "gate is null");
            requireNonNull(then, "then is null");
            if (then instanceof Hold) {
                throw new IllegalArgumentException("a hold cannot be followed by another hold");
            }
        }
    }

    static MockAction succeed() {
        return new Succeed();
    }

    static MockAction fail(BackendException error) {
        return new Fail(error);
    }

    static MockAction recoverable(String message) {
        return new Fail(new BackendException.Recoverable(message));
    }

    static MockAction terminal(String message) {
        return new Fail(new BackendException.Terminal(message));
    }
}
