package io.agentenv.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
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
class ServerConfigTest {
    @TempDir
    Path dir;

    @Test
    void every_default_is_pinned() {
        ServerConfig config = ServerConfig.load(Map.of());
        assertThat(config.listen()).isEqualTo(new InetSocketAddress("0.0.0.0", 3000));
        assertThat(config.dataDir()).isEqualTo(Path.of("/var/lib/agentenv"));
        assertThat(config.backend()).isEqualTo("container");
        assertThat(config.sandboxDomain()).isEmpty();
        assertThat(config.apiKey()).isEmpty();
        assertThat(config.defaultTimeoutV1()).isEqualTo(Duration.ofSeconds(15));
        assertThat(config.defaultTimeoutV2()).isEqualTo(Duration.ofSeconds(300));
        assertThat(config.maxRequestBytes()).isEqualTo(1 << 20);
        assertThat(config.maxConcurrentRequests()).isEqualTo(1024);
        assertThat(config.shutdownGrace()).isEqualTo(Duration.ofSeconds(30));
        assertThat(config.customExtensionUrl()).isEmpty();
        assertThat(config.customExtensionTimeout()).isEqualTo(Duration.ofMillis(5000));
        assertThat(config.metricsSampleInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.backendSettings()).isEmpty();
        assertThat(config.console()).isTrue();
        assertThat(config.volumes()).isEqualTo(new VolumeConfig(1024, 10240, VolumeConfig.Storage.LOOP));
    }

    @Test
    void volume_sizes_and_storage_are_read_and_checked() {
        ServerConfig config = ServerConfig.load(Map.of(
                "AENV_VOLUME_DEFAULT_MB", "16",
                "AENV_VOLUME_MAX_MB", "64",
                "AENV_VOLUME_STORAGE", "directory"));
        assertThat(config.volumes()).isEqualTo(new VolumeConfig(16, 64, VolumeConfig.Storage.DIRECTORY));
        assertThatThrownBy(
                        () -> ServerConfig.load(Map.of("AENV_VOLUME_DEFAULT_MB", "2048", "AENV_VOLUME_MAX_MB", "1024")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("AENV_VOLUME_MAX_MB");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_VOLUME_DEFAULT_MB", "0")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("AENV_VOLUME_DEFAULT_MB");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_VOLUME_STORAGE", "nfs")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("AENV_VOLUME_STORAGE");
    }

    @Test
    void a_shared_volume_directory_takes_directory_storage_only() {
        ServerConfig config = ServerConfig.load(
                Map.of("AENV_VOLUME_STORAGE", "directory", "AENV_VOLUME_SHARED_DIR", "/mnt/cluster/volumes"));
        assertThat(config.volumes().sharedDir()).contains(Path.of("/mnt/cluster/volumes"));
        assertThat(config.volumes().shared()).isTrue();
        assertThat(ServerConfig.load(Map.of()).volumes().shared()).isFalse();
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_VOLUME_SHARED_DIR", "/mnt/cluster/volumes")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("AENV_VOLUME_STORAGE=directory");
        assertThatThrownBy(() -> ServerConfig.load(
                        Map.of("AENV_VOLUME_STORAGE", "directory", "AENV_VOLUME_SHARED_DIR", "volumes")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be absolute");
    }

    @Test
    void the_console_is_on_unless_aenv_console_is_off() {
        assertThat(ServerConfig.load(Map.of("AENV_CONSOLE", "off")).console()).isFalse();
        assertThat(ServerConfig.load(Map.of("AENV_CONSOLE", "OFF")).console()).isFalse();
        assertThat(ServerConfig.load(Map.of("AENV_CONSOLE", "on")).console()).isTrue();
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_CONSOLE", "no")))
                .hasMessageContaining("AENV_CONSOLE must be on or off");
    }

    @Test
    void backend_settings_reach_the_backend_without_their_prefix_and_lower_cased() throws Exception {
        Path file = Files.writeString(
                dir.resolve("server.properties"), "AENV_BACKEND_POOL_SIZE=2\nAENV_BACKEND_CACHE_DIR=/a\n");
        ServerConfig config = ServerConfig.load(Map.of(
                "AENV_CONFIG", file.toString(),
                "AENV_BACKEND", "mock",
                "AENV_BACKEND_CACHE_DIR", "/b"));
        assertThat(config.backend()).isEqualTo("mock");
        assertThat(config.backendSettings())
                .containsExactlyInAnyOrderEntriesOf(Map.of("pool_size", "2", "cache_dir", "/b"));
        assertThat(config.toString())
                .contains("backendSettings=[cache_dir, pool_size]")
                .doesNotContain("/b");
    }

    @Test
    void every_key_is_read_from_the_environment() {
        ServerConfig config = ServerConfig.load(Map.of(
                "AENV_LISTEN", "127.0.0.1:0",
                "AENV_HOME", dir.toString(),
                "AENV_BACKEND", "mock",
                "AENV_SANDBOX_DOMAIN", "localhost:3002",
                "AENV_API_KEY", "e2b_0123456789abcdef0123",
                "AENV_DEFAULT_TIMEOUT_V1_SECONDS", "20",
                "AENV_DEFAULT_TIMEOUT_V2_SECONDS", "600",
                "AENV_MAX_REQUEST_BYTES", "4096",
                "AENV_MAX_CONCURRENT_REQUESTS", "8",
                "AENV_SHUTDOWN_GRACE_SECONDS", "5"));
        assertThat(config.listen()).isEqualTo(new InetSocketAddress("127.0.0.1", 0));
        assertThat(config.dataDir()).isEqualTo(dir);
        assertThat(config.backend()).isEqualTo("mock");
        assertThat(config.sandboxDomain()).contains("localhost:3002");
        assertThat(config.apiKey()).contains("e2b_0123456789abcdef0123");
        assertThat(config.defaultTimeoutV1()).isEqualTo(Duration.ofSeconds(20));
        assertThat(config.defaultTimeoutV2()).isEqualTo(Duration.ofSeconds(600));
        assertThat(config.maxRequestBytes()).isEqualTo(4096);
        assertThat(config.maxConcurrentRequests()).isEqualTo(8);
        assertThat(config.shutdownGrace()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.toString()).doesNotContain("e2b_0123456789abcdef0123");
    }

    @Test
    void the_environment_overrides_the_config_file() throws Exception {
        Path file =
                Files.writeString(dir.resolve("server.properties"), "AENV_BACKEND=mock\nAENV_LISTEN=127.0.0.1:4000\n");
        ServerConfig config =
                ServerConfig.load(Map.of("AENV_CONFIG", file.toString(), "AENV_LISTEN", "127.0.0.1:5000"));
        assertThat(config.backend()).isEqualTo("mock");
        assertThat(config.listen().getPort()).isEqualTo(5000);
    }

    @Test
    void the_extension_is_configured_from_the_file_or_the_env_and_its_url_never_printed() throws Exception {
        Path file = Files.writeString(
                dir.resolve("server.properties"),
                "AENV_CUSTOM_EXTENSION_URL=https://user:secret@ext.example:8443/hooks\n");
        ServerConfig config =
                ServerConfig.load(Map.of("AENV_CONFIG", file.toString(), "AENV_CUSTOM_EXTENSION_TIMEOUT_MS", "1500"));

        assertThat(config.customExtensionUrl())
                .contains(java.net.URI.create("https://user:secret@ext.example:8443/hooks"));
        assertThat(config.customExtensionTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(config.toString()).doesNotContain("secret", "/hooks").contains("https://ext.example:8443");
    }

    @Test
    void a_bad_custom_extension_url_or_timeout_fails_fast_without_echoing_the_url() {
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_CUSTOM_EXTENSION_URL", "ftp://u:secret@h/")))
                .hasMessageContaining("AENV_CUSTOM_EXTENSION_URL")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_CUSTOM_EXTENSION_URL", "http://h/x?token=secret")))
                .hasMessageContaining("query")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_CUSTOM_EXTENSION_URL", "not a url")))
                .hasMessageContaining("AENV_CUSTOM_EXTENSION_URL");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_CUSTOM_EXTENSION_TIMEOUT_MS", "0")))
                .hasMessageContaining("AENV_CUSTOM_EXTENSION_TIMEOUT_MS");
    }

    @Test
    void an_unknown_key_in_the_config_file_is_rejected() throws Exception {
        Path file = Files.writeString(dir.resolve("server.properties"), "AENV_BAKEND=mock\n");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_CONFIG", file.toString())))
                .hasMessageContaining("unknown keys")
                .hasMessageContaining("AENV_BAKEND");
    }

    @Test
    void a_metrics_sample_interval_not_a_whole_number_of_ms_within_range_fails_fast() {
        for (String bad : new String[] {"x", "1.5", "-1", "0", "99", "3600001"}) {
            assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_METRICS_SAMPLE_INTERVAL_MS", bad)))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("AENV_METRICS_SAMPLE_INTERVAL_MS");
        }
        assertThat(ServerConfig.load(Map.of("AENV_METRICS_SAMPLE_INTERVAL_MS", "250"))
                        .metricsSampleInterval())
                .isEqualTo(Duration.ofMillis(250));
        assertThat(ServerConfig.load(Map.of("AENV_METRICS_SAMPLE_INTERVAL_MS", "100"))
                        .metricsSampleInterval())
                .isEqualTo(Duration.ofMillis(100));
        assertThat(ServerConfig.load(Map.of("AENV_METRICS_SAMPLE_INTERVAL_MS", "3600000"))
                        .metricsSampleInterval())
                .isEqualTo(Duration.ofHours(1));
    }

    @Test
    void images_live_under_the_home_unless_set_and_registries_are_parsed() {
        ServerConfig defaults = ServerConfig.load(Map.of("AENV_HOME", "/srv/aenv"));
        ServerConfig set = ServerConfig.load(Map.of(
                "AENV_IMAGES_DIR", "/cache/images",
                "AENV_IMAGES_MIRRORS", "docker.io=127.0.0.1:5000",
                "AENV_IMAGES_INSECURE", "registry.lan:5000"));

        assertThat(defaults.imagesDir()).isEqualTo(Path.of("/srv/aenv/images"));
        assertThat(set.imagesDir()).isEqualTo(Path.of("/cache/images"));
        assertThat(set.registries().endpoint("docker.io")).isEqualTo("127.0.0.1:5000");
        assertThat(set.registries().insecure()).contains("registry.lan:5000");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_IMAGES_MIRRORS", "docker.io")))
                .hasMessageContaining("AENV_IMAGES_MIRRORS");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_IMAGES_DIR", "relative")))
                .hasMessageContaining("AENV_IMAGES_DIR");
    }

    @Test
    void bad_values_fail_fast_naming_the_key() {
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_LISTEN", "nowhere")))
                .hasMessageContaining("AENV_LISTEN");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_LISTEN", "0.0.0.0:70000")))
                .hasMessageContaining("AENV_LISTEN");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_HOME", "relative")))
                .hasMessageContaining("AENV_HOME");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_BACKEND", "Bad Name")))
                .hasMessageContaining("AENV_BACKEND");
        assertThatThrownBy(() -> ServerConfig.load(Map.of("AENV_MAX_REQUEST_BYTES", "x")))
                .hasMessageContaining("AENV_MAX_REQUEST_BYTES");
        assertThat(ServerConfig.load(Map.of("AENV_LISTEN", ":0")).listen().getPort())
                .isZero();
        assertThat(ServerConfig.load(Map.of()).apiKey()).isEqualTo(Optional.empty());
    }
}
