package io.agentenv.backend.container.host;

import static java.util.Objects.requireNonNull;

import java.util.regex.Pattern;

/** A runc container id; also the last segment of its cgroup path. Checked once here, used raw in argv and paths. */
public record ContainerId(String value) {

    private static final Pattern VALID = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");

    public ContainerId {
        requireNonNull(value, "value is null");
        if (!VALID.matcher(value).matches()) {
            throw new IllegalArgumentException("container id must match " + VALID + ": '" + value + "'");
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
