package io.agentenv.cli;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * One {@code --volume NAME:/PATH[:ro|:rw]} of {@code aenv create} and {@code aenv start}: the volume (a name or an id,
 * the server resolves it), the absolute path it is mounted at in the sandbox, and whether it is read-only (default:
 * read-write). Serialised as an element of the create body's {@code volumeMounts}: {@code {name, path, readOnly}}.
 */
record VolumeMountOption(String name, String path, boolean readOnly) {
    static final String SHAPE = "NAME:/PATH[:ro|:rw]";

    VolumeMountOption {
        requireNonNull(name, "name is null");
        requireNonNull(path, "path is null");
    }

    /**
     * Parses {@code NAME:/PATH}, {@code NAME:/PATH:ro} or {@code NAME:/PATH:rw}: NAME is what comes before the first
     * colon, a last colon after the path starts the mode. Throws {@link IllegalArgumentException} (a usage error) for
     * any other shape.
     */
    static VolumeMountOption parse(String option) {
        int colon = option.indexOf(':');
        if (colon <= 0) {
            throw bad(option, "name the volume and the path, as " + SHAPE);
        }
        String name = option.substring(0, colon);
        String rest = option.substring(colon + 1);
        if (!rest.startsWith("/")) {
            throw bad(option, "the path must be absolute (start with /), as in " + SHAPE);
        }
        String path = rest;
        boolean readOnly = false;
        int last = rest.lastIndexOf(':');
        if (last >= 0) {
            String mode = rest.substring(last + 1);
            path = rest.substring(0, last);
            readOnly = switch (mode) {
                case "ro" -> true;
                case "rw" -> false;
                default -> throw bad(option, "the mode after the path must be ro or rw, not '" + mode + "'");
            };
        }
        if (path.equals("/")) {
            throw bad(option, "a volume cannot be mounted at /");
        }
        return new VolumeMountOption(name, path, readOnly);
    }

    /** Each option parsed, in order; none when the option was not given ({@code null}). */
    static List<VolumeMountOption> parseAll(List<String> options) {
        return options == null
                ? List.of()
                : options.stream().map(VolumeMountOption::parse).toList();
    }

    private static IllegalArgumentException bad(String option, String why) {
        return new IllegalArgumentException("bad --volume " + Printable.of(option) + ": " + why);
    }
}
