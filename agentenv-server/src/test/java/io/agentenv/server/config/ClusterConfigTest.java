package io.agentenv.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.cluster.NodeId;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ClusterConfigTest {
    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/agentenv";
    private static final String KEY = "e2b_0123456789abcdef0123456789abcdef01234567";

    @TempDir
    Path dir;

    @Test
    void a_server_without_a_cluster_database_runs_alone() {
        assertThat(ServerConfig.load(Map.of()).cluster()).isEmpty();
    }

    @Test
    void a_node_reads_its_id_address_lease_and_database_password_file() throws Exception {
        Path password = Files.writeString(dir.resolve("password"), "s3cret\n");
        ServerConfig config = ServerConfig.load(Map.of(
                "AENV_CLUSTER_DATABASE_URL", URL,
                "AENV_CLUSTER_DATABASE_PASSWORD_FILE", password.toString(),
                "AENV_NODE_ID", "node-1",
                "AENV_NODE_ADDRESS", "http://10.0.0.2:3000",
                "AENV_CLUSTER_LEASE_SECONDS", "6"));
        ClusterConfig cluster = config.cluster().orElseThrow();
        assertThat(cluster.database()).isEqualTo(new ClusterDatabase(URL, "agentenv", Optional.of("s3cret")));
        assertThat(cluster.database().toString()).doesNotContain("s3cret");
        assertThat(cluster.nodeId()).isEqualTo(new NodeId("node-1"));
        assertThat(cluster.address()).isEqualTo(URI.create("http://10.0.0.2:3000"));
        assertThat(cluster.leaseTtl()).isEqualTo(Duration.ofSeconds(6));
        assertThat(cluster.deadAfter()).isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void a_node_without_its_id_or_address_or_with_bad_values_is_refused() {
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_CLUSTER_DATABASE_URL", URL)))
                .hasMessageContaining("AENV_NODE_ID")
                .hasMessageContaining("AENV_NODE_ADDRESS");
        assertThatThrownBy(() -> ServerConfig.load(Map.of(
                        "AENV_CLUSTER_DATABASE_URL", URL,
                        "AENV_NODE_ID", "Node_1",
                        "AENV_NODE_ADDRESS", "http://10.0.0.2:3000")))
                .hasMessageContaining("node id");
        assertThatThrownBy(() -> ServerConfig.load(Map.of(
                        "AENV_CLUSTER_DATABASE_URL", URL,
                        "AENV_NODE_ID", "n1",
                        "AENV_NODE_ADDRESS", "http://10.0.0.2:3000/api")))
                .hasMessageContaining("AENV_NODE_ADDRESS");
        assertThatThrownBy(() -> ServerConfig.load(Map.of(
                        "AENV_CLUSTER_DATABASE_URL", "jdbc:sqlite:/tmp/x",
                        "AENV_NODE_ID", "n1",
                        "AENV_NODE_ADDRESS", "http://10.0.0.2:3000")))
                .hasMessageContaining("PostgreSQL");
        assertThatThrownBy(() -> ServerConfig.load(Map.of(
                        "AENV_CLUSTER_DATABASE_URL", URL,
                        "AENV_NODE_ID", "n1",
                        "AENV_NODE_ADDRESS", "http://10.0.0.2:3000",
                        "AENV_CLUSTER_LEASE_SECONDS", "1")))
                .hasMessageContaining("AENV_CLUSTER_LEASE_SECONDS");
    }

    @Test
    void a_node_reads_its_shared_storage_a_bucket_or_a_directory() {
        Map<String, String> node = Map.of(
                "AENV_CLUSTER_DATABASE_URL", URL, "AENV_NODE_ID", "n1", "AENV_NODE_ADDRESS", "http://10.0.0.2:3000");
        assertThat(ServerConfig.load(node).cluster().orElseThrow().sharedStorage())
                .isEmpty();
        assertThat(ServerConfig.load(with(node, "AENV_OBJECT_STORE_DIR", "/mnt/agentenv"))
                        .cluster()
                        .orElseThrow()
                        .sharedStorage())
                .contains(new SharedStorageConfig.Directory(Path.of("/mnt/agentenv")));
        Map<String, String> s3 = with(
                with(node, "AENV_OBJECT_STORE_S3_BUCKET", "agentenv"),
                "AENV_OBJECT_STORE_S3_ENDPOINT",
                "http://10.0.0.9:9000");
        assertThat(ServerConfig.load(with(s3, "AENV_OBJECT_STORE_S3_PREFIX", "prod"))
                        .cluster()
                        .orElseThrow()
                        .sharedStorage())
                .contains(new SharedStorageConfig.S3(
                        "agentenv", Optional.of(URI.create("http://10.0.0.9:9000")), "us-east-1", "prod/"));
    }

    @Test
    void shared_storage_named_twice_half_or_without_a_cluster_is_refused() {
        Map<String, String> node = Map.of(
                "AENV_CLUSTER_DATABASE_URL", URL, "AENV_NODE_ID", "n1", "AENV_NODE_ADDRESS", "http://10.0.0.2:3000");
        assertThatThrownBy(() -> ServerConfig.load(
                        with(with(node, "AENV_OBJECT_STORE_DIR", "/mnt/a"), "AENV_OBJECT_STORE_S3_BUCKET", "b")))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> ServerConfig.load(with(node, "AENV_OBJECT_STORE_S3_ENDPOINT", "http://s3:9000")))
                .hasMessageContaining("AENV_OBJECT_STORE_S3_BUCKET");
        assertThatThrownBy(() -> ServerConfig.load(with(node, "AENV_OBJECT_STORE_DIR", "relative/dir")))
                .hasMessageContaining("absolute");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_OBJECT_STORE_DIR", "/mnt/a")))
                .hasMessageContaining("AENV_CLUSTER_DATABASE_URL");
    }

    private static Map<String, String> with(Map<String, String> values, String key, String value) {
        Map<String, String> copy = new java.util.HashMap<>(values);
        copy.put(key, value);
        return copy;
    }

    @Test
    void a_gateway_needs_the_api_key_and_the_database() {
        assertThatThrownBy(() -> GatewayConfig.load(Map.of("AENV_CLUSTER_DATABASE_URL", URL)))
                .hasMessageContaining("AENV_API_KEY");
        assertThatThrownBy(() -> GatewayConfig.load(Map.of("AENV_API_KEY", KEY)))
                .hasMessageContaining("AENV_CLUSTER_DATABASE_URL");
        GatewayConfig config = GatewayConfig.load(Map.of(
                "AENV_API_KEY",
                KEY,
                "AENV_CLUSTER_DATABASE_URL",
                URL,
                "AENV_LISTEN",
                "127.0.0.1:3100",
                "AENV_SANDBOX_DOMAIN",
                "sandbox.test"));
        assertThat(config.listen().getPort()).isEqualTo(3100);
        assertThat(config.sandboxDomain()).contains("sandbox.test");
        assertThat(config.toString()).doesNotContain(KEY);
    }
}
