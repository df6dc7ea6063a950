package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.util.regex.Pattern;

/**
 * The id of something a sandbox can be launched from: a built-in template of the backend (for example {@code base}) or
 * a snapshot recorded in the catalog. Aliases are resolved to ids by the orchestrator before a backend sees them.
 */
public record TemplateId(String value) {
    private static final Pattern FORMAT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");

    public TemplateId {
        requireNonNull(value, "value is null");
        if (!FORMAT.matcher(value).matches()) {
            throw new IllegalArgumentException("template id must be 1-128 letters, digits, '_', '.' or '-'");
        }
    }

    public static boolean isValid(String text) {
        return text != null && FORMAT.matcher(text).matches();
    }

    @Override
    public String toString() {
        return value;
    }
}
