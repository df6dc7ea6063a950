package io.agentenv.cluster;

import static java.util.Objects.requireNonNull;

import java.util.regex.Pattern;

/** A node's name in the cluster: 1 to 63 lowercase letters, digits and '-', starting with a letter or digit. */
public record NodeId(String value) {
    private static final Pattern FORMAT = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");

    public NodeId {
        requireNonNull(value, "value is null");
        if (!FORMAT.matcher(value).matches()) {
            throw new IllegalArgumentException(
                    "node id must be 1 to 63 lowercase letters, digits or '-', starting with a letter or digit");
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
