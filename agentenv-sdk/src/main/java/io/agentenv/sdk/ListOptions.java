package io.agentenv.sdk;

import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Which sandboxes {@link Sandbox#list} returns, newest first, a page at a time. Build with {@link #builder()}.
 *
 * @param metadata  only sandboxes whose metadata holds all these entries
 * @param states    only sandboxes in these states (empty: running and paused)
 * @param limit     the page size (1..100; empty: the server's, 100)
 * @param nextToken where to start (a token from an earlier page)
 */
public record ListOptions(
        Map<String, String> metadata, Set<SandboxState> states, OptionalInt limit, Optional<String> nextToken) {
    /** Checks the fields. */
    public ListOptions {
        metadata = Map.copyOf(metadata);
        states = states.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(states));
        Objects.requireNonNull(limit, "limit");
        if (limit.isPresent() && (limit.getAsInt() < 1 || limit.getAsInt() > 100)) {
            throw new InvalidArgumentException("limit must be 1..100: " + limit.getAsInt());
        }
        Objects.requireNonNull(nextToken, "nextToken");
    }

    /** Every running and paused sandbox. */
    public static ListOptions all() {
        return builder().build();
    }

    /** A builder: no filter, the server's page size. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link ListOptions}. */
    public static final class Builder {
        private final Map<String, String> metadata = new LinkedHashMap<>();
        private final Set<SandboxState> states = EnumSet.noneOf(SandboxState.class);
        private Integer limit;
        private String nextToken;

        private Builder() {}

        /** Only sandboxes with this metadata entry. */
        public Builder metadata(String key, String value) {
            metadata.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Only sandboxes in these states. */
        public Builder states(SandboxState... states) {
            this.states.addAll(Set.of(states));
            return this;
        }

        /** The page size. */
        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        /** Start at this page token. */
        public Builder nextToken(String nextToken) {
            this.nextToken = nextToken;
            return this;
        }

        /** The options. */
        public ListOptions build() {
            return new ListOptions(
                    metadata,
                    states,
                    limit == null ? OptionalInt.empty() : OptionalInt.of(limit),
                    Optional.ofNullable(nextToken));
        }
    }
}
