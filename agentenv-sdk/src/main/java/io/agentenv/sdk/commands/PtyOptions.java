package io.agentenv.sdk.commands;

import io.agentenv.sdk.InvalidArgumentException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A pseudo-terminal session ({@link Pty#create}): an interactive login shell ({@code bash -i -l}) with
 * {@code TERM=xterm-256color} and a UTF-8 locale unless {@code envs} set them. Build with {@link #builder(int, int)}.
 *
 * @param size    the terminal size
 * @param cwd     working directory
 * @param envs    environment variables
 * @param user    the user to run as
 * @param timeout how long the session may last ({@link Duration#ZERO}: no limit; default 60 s)
 * @param onData  called with the terminal's output as it arrives
 */
public record PtyOptions(
        PtySize size,
        Optional<String> cwd,
        Map<String, String> envs,
        Optional<String> user,
        Duration timeout,
        Optional<Consumer<byte[]>> onData) {
    /** Checks the fields. */
    public PtyOptions {
        Objects.requireNonNull(size, "size");
        Objects.requireNonNull(cwd, "cwd");
        envs = Map.copyOf(envs);
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new InvalidArgumentException("timeout must not be negative: " + timeout);
        }
        Objects.requireNonNull(onData, "onData");
    }

    /** A builder for a terminal of {@code cols} x {@code rows}. */
    public static Builder builder(int cols, int rows) {
        return new Builder(new PtySize(cols, rows));
    }

    /** Builds {@link PtyOptions}. */
    public static final class Builder {
        private final PtySize size;
        private String cwd;
        private final Map<String, String> envs = new LinkedHashMap<>();
        private String user;
        private Duration timeout = RunOptions.DEFAULT_TIMEOUT;
        private Consumer<byte[]> onData;

        private Builder(PtySize size) {
            this.size = size;
        }

        /** The working directory. */
        public Builder cwd(String cwd) {
            this.cwd = cwd;
            return this;
        }

        /** One environment variable. */
        public Builder env(String name, String value) {
            envs.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** The user to run as. */
        public Builder user(String user) {
            this.user = user;
            return this;
        }

        /** How long the session may last ({@link Duration#ZERO}: no limit). */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** Called with the terminal's output. */
        public Builder onData(Consumer<byte[]> onData) {
            this.onData = onData;
            return this;
        }

        /** The options. */
        public PtyOptions build() {
            return new PtyOptions(
                    size,
                    Optional.ofNullable(cwd),
                    envs,
                    Optional.ofNullable(user),
                    timeout,
                    Optional.ofNullable(onData));
        }
    }
}
