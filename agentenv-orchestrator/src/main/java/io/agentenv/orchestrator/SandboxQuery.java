package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A list request.
 *
 * @param states       the internal states to include (the API expands "running"/"paused"); KILLING is never listed
 * @param metadata     every pair must match exactly (AND)
 * @param template     template id or alias as given at create, matched exactly against either
 * @param startedAfter inclusive lower bound on startedAt
 * @param limit        0..1000 items per page
 * @param after        the cursor of the previous page
 */
public record SandboxQuery(
        Set<SandboxState> states,
        Map<String, String> metadata,
        Optional<String> template,
        Optional<Instant> startedAfter,
        SortOrder order,
        int limit,
        Optional<Cursor> after) {
    public SandboxQuery {
        states = states.isEmpty() ? EnumSet.noneOf(SandboxState.class) : EnumSet.copyOf(states);
        states.remove(SandboxState.KILLING);
        states = Set.copyOf(states);
        metadata = Map.copyOf(metadata);
        requireNonNull(template, "template is null");
        requireNonNull(startedAfter, "startedAfter is null");
        requireNonNull(order, "order is null");
        if (limit < 0 || limit > 1000) {
            throw new IllegalArgumentException("limit out of range: " + limit);
        }
        requireNonNull(after, "after is null");
    }

    /** All visible sandboxes, newest first. */
    public static SandboxQuery all(int limit) {
        return new SandboxQuery(
                SandboxState.visible(),
                Map.of(),
                Optional.empty(),
                Optional.empty(),
                SortOrder.DESC,
                limit,
                Optional.empty());
    }
}
