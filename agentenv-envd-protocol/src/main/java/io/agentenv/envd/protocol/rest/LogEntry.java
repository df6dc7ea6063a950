package io.agentenv.envd.protocol.rest;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * One entry of {@code GET /logs} (and one line of envd's journal file): {@code {"seq","timestamp","source":"envd|process",
 * "level","pid"?,"stream":"stdout|stderr|pty|event|<logger>","message"}}, the timestamp an ISO-8601 instant.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LogEntry(
        @JsonProperty(value = "seq", required = true) long seq,
        @JsonProperty(value = "timestamp", required = true) String timestamp,
        @JsonProperty(value = "source", required = true) String source,
        @JsonProperty(value = "level", required = true) String level,
        @JsonProperty("pid") Integer pid,
        @JsonProperty(value = "stream", required = true) String stream,
        @JsonProperty(value = "message", required = true) String message) {
    /** {@code source} of envd's own log lines. */
    public static final String SOURCE_ENVD = "envd";
    /** {@code source} of process events and output. */
    public static final String SOURCE_PROCESS = "process";

    public LogEntry {
        requireNonNull(timestamp, "timestamp is null");
        requireNonNull(source, "source is null");
        requireNonNull(level, "level is null");
        requireNonNull(stream, "stream is null");
        requireNonNull(message, "message is null");
    }
}
