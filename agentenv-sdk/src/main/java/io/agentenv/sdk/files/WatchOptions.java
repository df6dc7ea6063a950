package io.agentenv.sdk.files;

import io.agentenv.sdk.InvalidArgumentException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * How to watch a directory ({@link Files#watchDir}). Build with {@link #builder()}.
 *
 * @param recursive    whether to watch subdirectories too
 * @param includeEntry whether events carry the entry's details
 * @param timeout      how long the watch lasts ({@link Duration#ZERO}: until stopped; default 60 s); when it passes
 *                     the watch ends and {@code onExit} gets a {@link io.agentenv.sdk.TimeoutException}
 * @param user         the user whose home relative paths resolve in
 * @param onExit       called once when the watch ends: with the failure, or empty when stopped or ended cleanly
 */
public record WatchOptions(
        boolean recursive,
        boolean includeEntry,
        Duration timeout,
        Optional<String> user,
        Optional<Consumer<Optional<Throwable>>> onExit) {
    /** The default watch timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    /** Checks the fields. */
    public WatchOptions {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new InvalidArgumentException("timeout must not be negative: " + timeout);
        }
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(onExit, "onExit");
    }

    /** The defaults: not recursive, no entries, 60 s. */
    public static WatchOptions defaults() {
        return builder().build();
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link WatchOptions}. */
    public static final class Builder {
        private boolean recursive;
        private boolean includeEntry;
        private Duration timeout = DEFAULT_TIMEOUT;
        private String user;
        private Consumer<Optional<Throwable>> onExit;

        private Builder() {}

        /** Watch subdirectories too. */
        public Builder recursive(boolean recursive) {
            this.recursive = recursive;
            return this;
        }

        /** Events carry the entry's details. */
        public Builder includeEntry(boolean includeEntry) {
            this.includeEntry = includeEntry;
            return this;
        }

        /** How long the watch lasts ({@link Duration#ZERO}: until stopped). */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** The user. */
        public Builder user(String user) {
            this.user = user;
            return this;
        }

        /** Called once when the watch ends. */
        public Builder onExit(Consumer<Optional<Throwable>> onExit) {
            this.onExit = onExit;
            return this;
        }

        /** The options. */
        public WatchOptions build() {
            return new WatchOptions(
                    recursive, includeEntry, timeout, Optional.ofNullable(user), Optional.ofNullable(onExit));
        }
    }
}
