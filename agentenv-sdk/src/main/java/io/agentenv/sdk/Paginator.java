package io.agentenv.sdk;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Pages of a listing, fetched on demand: call {@link #nextItems()} while {@link #hasNext()}. Not thread-safe.
 *
 * @param <T> the item type
 */
public final class Paginator<T> {
    /** One page and the token of the next one. */
    record Page<T>(List<T> items, Optional<String> nextToken) {}

    private final Function<Optional<String>, Page<T>> fetch;
    private Optional<String> nextToken;
    private boolean hasNext = true;

    Paginator(Optional<String> start, Function<Optional<String>, Page<T>> fetch) {
        this.nextToken = Objects.requireNonNull(start, "start");
        this.fetch = fetch;
    }

    /** Whether another page may follow (true before the first call). */
    public boolean hasNext() {
        return hasNext;
    }

    /** The token of the next page, if there is one. */
    public Optional<String> nextToken() {
        return nextToken;
    }

    /** The next page; {@link InvalidArgumentException} when there is none. */
    public List<T> nextItems() {
        if (!hasNext) {
            throw new InvalidArgumentException("no more items to fetch");
        }
        Page<T> page = fetch.apply(nextToken);
        nextToken = page.nextToken();
        hasNext = nextToken.isPresent();
        return page.items();
    }

    /** Every remaining item (fetches all pages). */
    public List<T> all() {
        java.util.ArrayList<T> out = new java.util.ArrayList<>();
        while (hasNext()) {
            out.addAll(nextItems());
        }
        return out;
    }
}
