package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import java.util.Map;

/**
 * A structured sandbox log entry: {@code level} is {@code debug}, {@code info}, {@code warn} or {@code error};
 * {@code timestamp} is RFC 3339; {@code fields} carries string key-values (for example the source and the pid).
 */
public record SandboxLogEntry(String timestamp, String level, String message, Map<String, String> fields) {
    public SandboxLogEntry {
        requireNonNull(timestamp, "timestamp is null");
        requireNonNull(level, "level is null");
        requireNonNull(message, "message is null");
        fields = Map.copyOf(requireNonNull(fields, "fields is null"));
    }
}
