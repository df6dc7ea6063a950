package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/** One page of results; {@code next} is present only when more items remain after this page. */
public record Page<T>(List<T> items, Optional<Cursor> next) {
    public Page {
        items = List.copyOf(items);
        requireNonNull(next, "next is null");
    }
}
