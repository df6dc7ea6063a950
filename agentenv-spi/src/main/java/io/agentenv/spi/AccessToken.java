package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

/** A secret token (for example the envd access token). {@link #toString()} never shows the value. */
public record AccessToken(String value) {
    public AccessToken {
        requireNonNull(value, "value is null");
        if (value.isEmpty()) {
            throw new IllegalArgumentException("token is empty");
        }
    }

    @Override
    public String toString() {
        return "<redacted>";
    }
}
