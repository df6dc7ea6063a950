package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/**
 * A keyset position: the (time, id) of the last item of a page. The next page starts strictly after it in the
 * query's order. The API encodes it as an opaque token (and rejects tokens it cannot decode with 400); the
 * orchestrator never sees the token text.
 */
public record Cursor(Instant at, String id) {
    public Cursor {
        requireNonNull(at, "at is null");
        requireNonNull(id, "id is null");
    }
}
