package io.agentenv.sdk.internal;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Jackson functions for the REST bodies. Internal; not part of the API. */
public final class Json {
    /** The one mapper. */
    public static final ObjectMapper MAPPER =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private Json() {}

    /** A new empty object. */
    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** An array of strings. */
    public static ArrayNode strings(Collection<String> values) {
        ArrayNode array = MAPPER.createArrayNode();
        values.forEach(array::add);
        return array;
    }

    /** An object of string values. */
    public static ObjectNode stringMap(Map<String, String> values) {
        ObjectNode node = object();
        values.forEach(node::put);
        return node;
    }

    /** Parses bytes; empty or malformed input gives {@code Optional.empty()}. */
    public static Optional<JsonNode> parse(byte[] body) {
        if (body == null || body.length == 0) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(MAPPER.readTree(body));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Serialises a tree. */
    public static byte[] bytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A text field, or null. */
    public static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    /** A text field, or {@code fallback}. */
    public static String text(JsonNode node, String field, String fallback) {
        String v = text(node, field);
        return v == null ? fallback : v;
    }

    /** A date-time field (RFC 3339), or null. */
    public static Instant instant(JsonNode node, String field) {
        String v = text(node, field);
        if (v == null || v.isEmpty()) {
            return null;
        }
        return OffsetDateTime.parse(v).toInstant();
    }

    /** An object of strings as a map (empty when absent). */
    public static Map<String, String> map(JsonNode node, String field) {
        Map<String, String> out = new LinkedHashMap<>();
        JsonNode v = node.get(field);
        if (v != null && v.isObject()) {
            v.properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
        }
        return out;
    }

    /** An array of strings as a list (empty when absent). */
    public static List<String> list(JsonNode node, String field) {
        List<String> out = new ArrayList<>();
        JsonNode v = node.get(field);
        if (v != null && v.isArray()) {
            v.forEach(e -> out.add(e.asText()));
        }
        return out;
    }
}
