package io.agentenv.sdk.commands;

import io.agentenv.sdk.InvalidArgumentException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * How to run a command ({@link Commands#run}, {@link Commands#start}). Immutable; build with {@link #builder()}.
 *
 * @param cwd      working directory (default: the user's home)
 * @param envs     environment variables on top of the sandbox's
 * @param user     the user to run as (default: the sandbox's default user, {@code user})
 * @param timeout  how long the command may run; envd kills it then and the call fails with a
 *                 {@link io.agentenv.sdk.TimeoutException} ({@link Duration#ZERO}: no limit; default 60 s)
 * @param stdin    whether to keep stdin open for {@link CommandHandle#sendStdin} (default false: stdin is empty)
 * @param tag      a tag envd lists the process with
 * @param onStdout called with each piece of stdout as it arrives (UTF-8, split on character boundaries)
 * @param onStderr called with each piece of stderr as it arrives
 */
public record RunOptions(
        Optional<String> cwd,
        Map<String, String> envs,
        Optional<String> user,
        Duration timeout,
        boolean stdin,
        Optional<String> tag,
        Optional<Consumer<String>> onStdout,
        Optional<Consumer<String>> onStderr) {
    /** The default command timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    /** Checks the fields. */
    public RunOptions {
        Objects.requireNonNull(cwd, "cwd");
        envs = Map.copyOf(envs);
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new InvalidArgumentException("timeout must not be negative: " + timeout);
        }
        Objects.requireNonNull(tag, "tag");
        Objects.requireNonNull(onStdout, "onStdout");
        Objects.requireNonNull(onStderr, "onStderr");
    }

    /** The defaults: 60 s timeout, no stdin, no callbacks. */
    public static RunOptions defaults() {
        return builder().build();
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link RunOptions}. */
    public static final class Builder {
        private String cwd;
        private final Map<String, String> envs = new LinkedHashMap<>();
        private String user;
        private Duration timeout = DEFAULT_TIMEOUT;
        private boolean stdin;
        private String tag;
        private Consumer<String> onStdout;
        private Consumer<String> onStderr;

        private Builder() {}

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

        /** Environment variables. */
        public Builder envs(Map<String, String> envs) {
            envs.forEach(this::env);
            return this;
        }

        /** The user to run as, e.g. {@code root}. */
        public Builder user(String user) {
            this.user = user;
            return this;
        }

        /** How long it may run ({@link Duration#ZERO}: no limit). */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** Keep stdin open for {@link CommandHandle#sendStdin}. */
        public Builder stdin(boolean stdin) {
            this.stdin = stdin;
            return this;
        }

        /** A tag for the process. */
        public Builder tag(String tag) {
            this.tag = tag;
            return this;
        }

        /** Called with stdout as it arrives. */
        public Builder onStdout(Consumer<String> onStdout) {
            this.onStdout = onStdout;
            return this;
        }

        /** Called with stderr as it arrives. */
        public Builder onStderr(Consumer<String> onStderr) {
            this.onStderr = onStderr;
            return this;
        }

        /** The options; throws {@link InvalidArgumentException} for a negative timeout. */
        public RunOptions build() {
            return new RunOptions(
                    Optional.ofNullable(cwd),
                    envs,
                    Optional.ofNullable(user),
                    timeout,
                    stdin,
                    Optional.ofNullable(tag),
                    Optional.ofNullable(onStdout),
                    Optional.ofNullable(onStderr));
        }
    }
}
