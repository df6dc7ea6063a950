package io.agentenv.sdk;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How to create a sandbox ({@link Sandbox#create(CreateOptions)}). Immutable; build with {@link #builder()}.
 * Unset values are left to the server (timeout 300 s, internet access allowed, kill on timeout).
 *
 * @param template            template id, alias or snapshot id (default {@code base})
 * @param timeout             how long it may live before {@code lifecycle} applies (at least 1 s)
 * @param metadata            metadata to find it by ({@link ListOptions})
 * @param envs                environment variables of every process in it
 * @param allowInternetAccess whether it may reach the internet
 * @param network             egress rules and port visibility
 * @param lifecycle           what happens on timeout
 */
public record CreateOptions(
        String template,
        Optional<Duration> timeout,
        Map<String, String> metadata,
        Map<String, String> envs,
        Optional<Boolean> allowInternetAccess,
        Optional<NetworkOptions> network,
        Optional<Lifecycle> lifecycle) {
    /** The default template. */
    public static final String DEFAULT_TEMPLATE = "base";

    /** Checks the fields ({@link InvalidArgumentException} for a timeout under 1 s or an empty template). */
    public CreateOptions {
        Objects.requireNonNull(template, "template");
        if (template.isBlank()) {
            throw new InvalidArgumentException("template must not be empty");
        }
        Objects.requireNonNull(timeout, "timeout");
        timeout.ifPresent(CreateOptions::checkTimeout);
        metadata = Map.copyOf(metadata);
        envs = Map.copyOf(envs);
        Objects.requireNonNull(allowInternetAccess, "allowInternetAccess");
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(lifecycle, "lifecycle");
    }

    static void checkTimeout(Duration timeout) {
        if (timeout.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new InvalidArgumentException("timeout must be at least 1 s: " + timeout);
        }
    }

    /** The defaults: template {@code base}, everything else the server's. */
    public static CreateOptions defaults() {
        return builder().build();
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link CreateOptions}. */
    public static final class Builder {
        private String template = DEFAULT_TEMPLATE;
        private Duration timeout;
        private final Map<String, String> metadata = new LinkedHashMap<>();
        private final Map<String, String> envs = new LinkedHashMap<>();
        private Boolean allowInternetAccess;
        private NetworkOptions network;
        private Lifecycle lifecycle;

        private Builder() {}

        /** The template id, alias or snapshot id. */
        public Builder template(String template) {
            this.template = template;
            return this;
        }

        /** How long it may live (rounded up to whole seconds). */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** One metadata entry. */
        public Builder metadata(String key, String value) {
            metadata.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Metadata entries. */
        public Builder metadata(Map<String, String> metadata) {
            metadata.forEach(this::metadata);
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

        /** Whether it may reach the internet. */
        public Builder allowInternetAccess(boolean allow) {
            this.allowInternetAccess = allow;
            return this;
        }

        /** Egress rules and port visibility. */
        public Builder network(NetworkOptions network) {
            this.network = network;
            return this;
        }

        /** What happens on timeout. */
        public Builder lifecycle(Lifecycle lifecycle) {
            this.lifecycle = lifecycle;
            return this;
        }

        /** The options; throws {@link InvalidArgumentException} for invalid values. */
        public CreateOptions build() {
            return new CreateOptions(
                    template,
                    Optional.ofNullable(timeout),
                    metadata,
                    envs,
                    Optional.ofNullable(allowInternetAccess),
                    Optional.ofNullable(network),
                    Optional.ofNullable(lifecycle));
        }
    }
}
