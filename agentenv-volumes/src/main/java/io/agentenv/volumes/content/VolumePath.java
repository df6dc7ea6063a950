package io.agentenv.volumes.content;

import io.agentenv.volumes.VolumeException;
import java.util.ArrayList;
import java.util.List;

/**
 * A path inside a volume as a client sends it ({@code /a/b}, {@code a/b}; {@code /} or empty is the root), split into
 * its components. {@code .} and empty components are dropped; {@code ..}, NUL bytes, components longer than 255 bytes
 * and paths longer than 4096 bytes are refused: a path names a place below the root by its components alone.
 */
public record VolumePath(List<String> components) {
    static final int MAX_COMPONENT = 255;
    static final int MAX_PATH = 4096;

    public VolumePath {
        components = List.copyOf(components);
    }

    public static final VolumePath ROOT = new VolumePath(List.of());

    public static VolumePath parse(String raw) {
        if (raw == null) {
            throw VolumeException.invalid("path is required");
        }
        if (raw.length() > MAX_PATH) {
            throw VolumeException.invalid("path is longer than " + MAX_PATH + " characters");
        }
        if (raw.indexOf('\0') >= 0) {
            throw VolumeException.invalid("path contains a NUL byte");
        }
        List<String> parts = new ArrayList<>();
        for (String part : raw.split("/", -1)) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                throw VolumeException.invalid("path must not contain '..': " + clip(raw));
            }
            if (part.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_COMPONENT) {
                throw VolumeException.invalid("a path component is longer than " + MAX_COMPONENT + " bytes");
            }
            parts.add(part);
        }
        return new VolumePath(parts);
    }

    public boolean isRoot() {
        return components.isEmpty();
    }

    /** The last component; empty for the root. */
    public String name() {
        return isRoot() ? "" : components.getLast();
    }

    public VolumePath parent() {
        return isRoot() ? this : new VolumePath(components.subList(0, components.size() - 1));
    }

    public VolumePath child(String name) {
        List<String> more = new ArrayList<>(components);
        more.add(name);
        return new VolumePath(more);
    }

    /** Whether {@code other} is this path or below it. */
    public boolean contains(VolumePath other) {
        return other.components.size() >= components.size()
                && other.components.subList(0, components.size()).equals(components);
    }

    @Override
    public String toString() {
        return "/" + String.join("/", components);
    }

    private static String clip(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }
}
