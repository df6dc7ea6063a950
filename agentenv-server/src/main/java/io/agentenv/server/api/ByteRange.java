package io.agentenv.server.api;

import java.util.Optional;

/**
 * One HTTP byte range ({@code Range: bytes=first-last}, {@code bytes=first-}, {@code bytes=-suffix}) of a body of
 * known size, as {@code [first, last]}. A header that is not one byte range is ignored (the whole body is sent, as RFC
 * 9110 allows); a range that starts past the end is a 416.
 */
final class ByteRange {
    private ByteRange() {}

    static Optional<long[]> parse(String header, long size) {
        String value = header.strip();
        if (!value.startsWith("bytes=") || value.indexOf(',') >= 0) {
            return Optional.empty();
        }
        String spec = value.substring("bytes=".length()).strip();
        int dash = spec.indexOf('-');
        if (dash < 0) {
            return Optional.empty();
        }
        String first = spec.substring(0, dash).strip();
        String last = spec.substring(dash + 1).strip();
        long from;
        long to;
        try {
            if (first.isEmpty()) {
                if (last.isEmpty()) {
                    return Optional.empty();
                }
                long suffix = Long.parseLong(last);
                if (suffix <= 0) {
                    throw unsatisfiable(size);
                }
                from = Math.max(0, size - suffix);
                to = size - 1;
            } else {
                from = Long.parseLong(first);
                to = last.isEmpty() ? size - 1 : Math.min(Long.parseLong(last), size - 1);
                if (from < 0 || (!last.isEmpty() && Long.parseLong(last) < from)) {
                    return Optional.empty();
                }
            }
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        if (from >= size) {
            throw unsatisfiable(size);
        }
        return Optional.of(new long[] {from, to});
    }

    private static HttpProblem unsatisfiable(long size) {
        return new HttpProblem(416, "range not satisfiable: the file has " + size + " bytes");
    }
}
