package io.agentenv.store.jdbc;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentenv.orchestrator.GuestDefaults;
import io.agentenv.orchestrator.VolumeAttachment;
import io.agentenv.spi.NetworkPolicy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Column encodings: instants as epoch nanoseconds, maps, lists and the network policy as JSON. The decoders take any
 * JSON text of the value (SQLite gives back what was written, PostgreSQL's jsonb its own rendering of it).
 */
public final class Codec {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() {};
    private static final long NANOS = 1_000_000_000L;
    private static final String EMPTY_MAP = "{}";
    /** The default policy's encoding (most sandboxes have it): encoded once, and decoded without parsing. */
    private static final String DEFAULT_NETWORK = encode(NetworkPolicy.DEFAULT);

    private Codec() {}

    /** Epoch nanoseconds, saturated outside 1677..2262 (so a far-away filter bound compares correctly). */
    public static long nanos(Instant instant) {
        long seconds = instant.getEpochSecond();
        if (seconds >= Long.MAX_VALUE / NANOS) {
            return Long.MAX_VALUE;
        }
        if (seconds <= Long.MIN_VALUE / NANOS) {
            return Long.MIN_VALUE;
        }
        return seconds * NANOS + instant.getNano();
    }

    public static Instant instant(long nanos) {
        return Instant.ofEpochSecond(Math.floorDiv(nanos, NANOS), Math.floorMod(nanos, NANOS));
    }

    public static String map(Map<String, String> map) {
        if (map.isEmpty()) {
            return EMPTY_MAP;
        }
        try {
            return JSON.writeValueAsString(new TreeMap<>(map));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode a string map", e);
        }
    }

    public static String list(List<String> list) {
        try {
            return JSON.writeValueAsString(list);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode a string list", e);
        }
    }

    public static List<String> list(String json) {
        try {
            return List.of(JSON.readValue(json, String[].class));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("corrupt string list in the store", e);
        }
    }

    public static Map<String, String> map(String json) {
        if (EMPTY_MAP.equals(json)) {
            return Map.of();
        }
        try {
            return JSON.readValue(json, STRING_MAP);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("corrupt string map in the store", e);
        }
    }

    /** A template's default user and workdir as a JSON object with the keys present ({@code {}} for none). */
    public static String guestDefaults(GuestDefaults defaults) {
        Map<String, String> fields = new TreeMap<>();
        defaults.user().ifPresent(u -> fields.put("user", u));
        defaults.workdir().ifPresent(w -> fields.put("workdir", w));
        return map(fields);
    }

    public static GuestDefaults guestDefaults(String json) {
        Map<String, String> fields = map(json);
        return new GuestDefaults(Optional.ofNullable(fields.get("user")), Optional.ofNullable(fields.get("workdir")));
    }

    /** The volumes a sandbox or snapshot mounts, as a JSON array of objects ({@code []} for none). */
    public static String volumes(List<VolumeAttachment> volumes) {
        if (volumes.isEmpty()) {
            return "[]";
        }
        ArrayNode array = JSON.createArrayNode();
        for (VolumeAttachment volume : volumes) {
            array.addObject()
                    .put("volumeId", volume.volumeId())
                    .put("name", volume.name())
                    .put("path", volume.path())
                    .put("readOnly", volume.readOnly());
        }
        return array.toString();
    }

    public static List<VolumeAttachment> volumes(String json) {
        if ("[]".equals(json)) {
            return List.of();
        }
        try {
            List<VolumeAttachment> volumes = new ArrayList<>();
            for (JsonNode node : JSON.readTree(json)) {
                volumes.add(new VolumeAttachment(
                        node.path("volumeId").asText(),
                        node.path("name").asText(),
                        node.path("path").asText(),
                        node.path("readOnly").asBoolean()));
            }
            return List.copyOf(volumes);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new IllegalStateException("corrupt volume list in the store", e);
        }
    }

    public static String network(NetworkPolicy policy) {
        return NetworkPolicy.DEFAULT.equals(policy) ? DEFAULT_NETWORK : encode(policy);
    }

    private static String encode(NetworkPolicy policy) {
        ObjectNode node = JSON.createObjectNode();
        node.put("internetAccess", policy.internetAccess().name());
        policy.allowOut().forEach(node.putArray("allowOut")::add);
        policy.denyOut().forEach(node.putArray("denyOut")::add);
        node.put("publicTraffic", policy.publicTraffic().name());
        return node.toString();
    }

    public static NetworkPolicy network(String json) {
        if (DEFAULT_NETWORK.equals(json)) {
            return NetworkPolicy.DEFAULT;
        }
        try {
            JsonNode node = JSON.readTree(json);
            return new NetworkPolicy(
                    NetworkPolicy.InternetAccess.valueOf(
                            node.path("internetAccess").asText()),
                    strings(node.path("allowOut")),
                    strings(node.path("denyOut")),
                    NetworkPolicy.PublicTraffic.valueOf(
                            node.path("publicTraffic").asText()));
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new IllegalStateException("corrupt network policy in the store", e);
        }
    }

    private static List<String> strings(JsonNode array) {
        List<String> values = new ArrayList<>();
        array.forEach(value -> values.add(value.asText()));
        return values;
    }
}
