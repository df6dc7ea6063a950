package io.agentenv.objectstore;

import static java.util.Objects.requireNonNull;

import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/**
 * An object's name in a store: one or more segments joined by {@code '/'}, each 1 to {@value #MAX_SEGMENT_LENGTH}
 * ASCII letters, digits, {@code '.'}, {@code '_'} or {@code '-'}, not starting with {@code '.'}; at most
 * {@value #MAX_LENGTH} characters in all.
 *
 * <p>Keys are read back from listings another machine wrote, so every key is checked here, once: no leading or
 * trailing {@code '/'}, no empty segment, no {@code "."} or {@code ".."} (nor any segment starting with a dot), nothing
 * outside the character set. A key therefore maps to a path beneath a store's directory by joining its segments, and
 * names starting with a dot are free for a store's own files.
 */
public record ObjectKey(String value) implements Comparable<ObjectKey> {
    /** The longest key, S3's limit (in bytes; keys are ASCII). */
    public static final int MAX_LENGTH = 1024;
    /** The longest segment: a file name with room for a store's suffixes below Linux's 255 bytes. */
    public static final int MAX_SEGMENT_LENGTH = 200;

    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*");

    public ObjectKey {
        requireNonNull(value, "value");
        String problem = problem(value);
        if (problem != null) {
            throw new IllegalArgumentException("invalid object key '" + printable(value) + "': " + problem);
        }
    }

    /** The key of {@code first} and {@code more} joined by {@code '/'}, each of them one or more segments. */
    public static ObjectKey of(String first, String... more) {
        requireNonNull(first, "first");
        if (more.length == 0) {
            return new ObjectKey(first);
        }
        StringBuilder joined = new StringBuilder(first);
        for (String part : more) {
            joined.append('/').append(requireNonNull(part, "part"));
        }
        return new ObjectKey(joined.toString());
    }

    /** Whether {@code value} is a valid key. */
    public static boolean isValid(String value) {
        return value != null && problem(value) == null;
    }

    /**
     * Checks a listing prefix: empty (every key), a key, or a key followed by {@code '/'} (the keys below it). A
     * prefix that ends inside a segment ({@code "templates/ba"}) matches keys that go on from there, as in S3.
     *
     * @return {@code prefix}
     * @throws IllegalArgumentException if it is none of these
     */
    public static String checkPrefix(String prefix) {
        requireNonNull(prefix, "prefix");
        if (prefix.isEmpty()) {
            return prefix;
        }
        String key = prefix.endsWith("/") ? prefix.substring(0, prefix.length() - 1) : prefix;
        String problem = problem(key);
        if (problem != null) {
            throw new IllegalArgumentException("invalid prefix '" + printable(prefix) + "': " + problem);
        }
        return prefix;
    }

    /** The key of {@code relative} (one or more segments) below this one. */
    public ObjectKey resolve(String relative) {
        return of(value, relative);
    }

    /** The segments, in order. */
    public List<String> segments() {
        return Arrays.asList(value.split("/"));
    }

    /** The last segment. */
    public String name() {
        return value.substring(value.lastIndexOf('/') + 1);
    }

    /** Whether this key is listed under {@code prefix} (a plain string prefix, as in S3). */
    public boolean startsWith(String prefix) {
        return value.startsWith(prefix);
    }

    @Override
    public int compareTo(ObjectKey other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }

    private static String problem(String value) {
        if (value.isEmpty()) {
            return "empty";
        }
        if (value.length() > MAX_LENGTH) {
            return "longer than " + MAX_LENGTH + " characters";
        }
        if (value.startsWith("/")) {
            return "starts with '/'";
        }
        if (value.endsWith("/")) {
            return "ends with '/'";
        }
        for (String segment : value.split("/", -1)) {
            if (segment.isEmpty()) {
                return "empty segment";
            }
            if (segment.equals(".") || segment.equals("..")) {
                return "segment '" + segment + "'";
            }
            if (segment.length() > MAX_SEGMENT_LENGTH) {
                return "a segment longer than " + MAX_SEGMENT_LENGTH + " characters";
            }
            if (!SEGMENT.matcher(segment).matches()) {
                return "segment '" + printable(segment)
                        + "' is not letters, digits, '.', '_' and '-' (not starting with '.')";
            }
        }
        return null;
    }

    /** {@code value} for a message: control and non-ASCII characters escaped, cut to 100 characters. */
    private static String printable(String value) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < value.length() && out.length() < 100; i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return value.length() > 100 ? out + "..." : out.toString();
    }
}
