package io.agentenv.envd.protocol.rest;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * One entry of the {@code POST /files} answer (a JSON array of them): {@code {"path","name","type":"file",
 * "metadata"?}}; {@code metadata} is left out when there is none and written in key order otherwise.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EntryInfo(String path, String name, String type, Map<String, String> metadata) {
    /** {@code type} of a regular file. */
    public static final String FILE = "file";

    public EntryInfo {
        requireNonNull(path, "path is null");
        requireNonNull(name, "name is null");
        requireNonNull(type, "type is null");
        metadata = metadata == null || metadata.isEmpty() ? null : Collections.unmodifiableMap(new TreeMap<>(metadata));
    }

    /** The metadata, empty when there is none. */
    public Map<String, String> metadataOrEmpty() {
        return metadata == null ? Map.of() : metadata;
    }
}
