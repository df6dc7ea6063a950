package io.agentenv.store.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeState;
import io.agentenv.store.jdbc.Codec;
import java.net.URI;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/** The cluster tables' rows: nodes (their load as JSON), lost sandboxes, and the database's times. */
final class ClusterRows {
    static final String NODE_COLUMNS = "id, address, state, epoch, lease_until, registered_at, load";
    static final String LOST_COLUMNS = "id, node, template, state, metadata, instance_id, reason, lost_at";

    private static final ObjectMapper JSON = new ObjectMapper();

    private ClusterRows() {}

    /** A row of {@link #NODE_COLUMNS}. */
    static NodeInfo node(ResultSet rs) throws SQLException {
        return new NodeInfo(
                new NodeId(rs.getString("id")),
                URI.create(rs.getString("address")),
                NodeState.valueOf(rs.getString("state")),
                rs.getLong("epoch"),
                instant(rs, "lease_until"),
                instant(rs, "registered_at"),
                load(rs.getString("load")));
    }

    /** A row of {@link #LOST_COLUMNS}. */
    static LostSandbox lost(ResultSet rs) throws SQLException {
        return new LostSandbox(
                rs.getString("id"),
                new NodeId(rs.getString("node")),
                rs.getString("template"),
                rs.getString("state"),
                Codec.map(rs.getString("metadata")),
                Optional.ofNullable(rs.getString("instance_id")).map(UUID::fromString),
                rs.getString("reason"),
                instant(rs, "lost_at"));
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        return rs.getObject(column, OffsetDateTime.class).toInstant();
    }

    /** A duration as whole milliseconds, for {@code ? * INTERVAL '1 millisecond'}; negative ones are refused. */
    static long millis(Duration duration, String name) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative");
        }
        return duration.toMillis();
    }

    static String load(NodeLoad load) {
        ObjectNode node = JSON.createObjectNode()
                .put("cpuCount", load.cpuCount())
                .put("memoryTotalMib", load.memoryTotalMib())
                .put("memoryAvailableMib", load.memoryAvailableMib())
                .put("cpuLoad", load.cpuLoad())
                .put("slotsUsed", load.slotsUsed())
                .put("slotsMax", load.slotsMax());
        ObjectNode stock = node.putObject("poolStock");
        load.poolStock().entrySet().stream()
                .sorted(Map.Entry.comparingByKey())
                .forEach(e -> stock.put(e.getKey(), e.getValue()));
        load.localTemplates().stream().sorted().forEach(node.putArray("localTemplates")::add);
        node.put("sharedVolumes", load.sharedVolumes());
        return node.toString();
    }

    static NodeLoad load(String json) {
        try {
            JsonNode node = JSON.readTree(json);
            Map<String, Integer> stock = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> entry : node.path("poolStock").properties()) {
                stock.put(entry.getKey(), entry.getValue().asInt());
            }
            Set<String> templates = new HashSet<>();
            node.path("localTemplates").forEach(t -> templates.add(t.asText()));
            return new NodeLoad(
                    node.path("cpuCount").asInt(),
                    node.path("memoryTotalMib").asLong(),
                    node.path("memoryAvailableMib").asLong(),
                    node.path("cpuLoad").asDouble(),
                    node.path("slotsUsed").asInt(),
                    node.path("slotsMax").asInt(),
                    stock,
                    templates,
                    node.path("sharedVolumes").asBoolean(false));
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new IllegalStateException("corrupt node load in the store", e);
        }
    }
}
