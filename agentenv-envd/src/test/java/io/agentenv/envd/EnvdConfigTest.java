package io.agentenv.envd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EnvdConfigTest {

    @Test
    void defaults_listen_on_49983_on_all_addresses_without_a_unix_socket() {
        EnvdConfig config = EnvdConfig.parse(new String[0], Map.of());
        assertThat(config.listen().getPort()).isEqualTo(49983);
        assertThat(config.listen().getHostString()).isEqualTo("0.0.0.0");
        assertThat(config.unixSocket()).isEmpty();
        assertThat(config.exitedRetention()).isEqualTo(Duration.ofMinutes(5));
        assertThat(config.logLevel()).isEqualTo(Level.INFO);
        assertThat(config.processPath()).isEqualTo("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        assertThat(EnvdConfig.parse(new String[0], Map.of("PATH", "/opt/bin:/bin"))
                        .processPath())
                .isEqualTo("/opt/bin:/bin");
    }

    @Test
    void options_override_environment_defaults() {
        EnvdConfig config = EnvdConfig.parse(
                new String[] {
                    "--port",
                    "5000",
                    "--unix-socket",
                    "/run/e.sock",
                    "--default-user",
                    "user",
                    "--log-level",
                    "debug",
                    "--exited-retention",
                    "10",
                    "--sandbox-id",
                    "sbx1"
                },
                Map.of("ENVD_PORT", "6000", "ENVD_SANDBOX_ID", "env-id"));
        assertThat(config.listen().getPort()).isEqualTo(5000);
        assertThat(config.unixSocket()).contains(Path.of("/run/e.sock"));
        assertThat(config.defaultUser()).isEqualTo("user");
        assertThat(config.logLevel()).isEqualTo(Level.DEBUG);
        assertThat(config.exitedRetention()).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.sandboxId()).isEqualTo("sbx1");
        assertThat(EnvdConfig.parse(new String[0], Map.of("ENVD_PORT", "6000"))
                        .listen()
                        .getPort())
                .isEqualTo(6000);
    }

    @Test
    void port_0_takes_any_free_port_and_the_build_time_training_option_is_gone() {
        assertThat(EnvdConfig.parse(new String[] {"--port", "0"}, Map.of())
                        .listen()
                        .getPort())
                .isZero();
        assertThatThrownBy(() -> EnvdConfig.parse(new String[] {"--aot-training"}, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option --aot-training");
    }

    @Test
    void warm_requests_are_off_unless_asked_for() {
        assertThat(EnvdConfig.parse(new String[0], Map.of()).warmRequests()).isZero();
        assertThat(EnvdConfig.parse(new String[] {"--warm-requests", "300"}, Map.of())
                        .warmRequests())
                .isEqualTo(300);
        assertThatThrownBy(() -> EnvdConfig.parse(new String[] {"--warm-requests", "-1"}, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 0 and 10000");
    }

    @Test
    void bad_values_and_unknown_options_are_rejected_with_the_usage() {
        assertThatThrownBy(() -> EnvdConfig.parse(new String[] {"--port", "70000"}, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 0 and 65535");
        assertThatThrownBy(() -> EnvdConfig.parse(new String[] {"--port"}, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs a value");
        assertThatThrownBy(() -> EnvdConfig.parse(new String[] {"--bogus"}, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("usage:");
        assertThatThrownBy(() -> EnvdConfig.parse(new String[] {"--log-level", "loud"}, Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void without_an_account_file_envd_is_root_by_name() {
        assertThat(EnvdConfig.processUser("?", 0)).isEqualTo("root");
        assertThat(EnvdConfig.processUser("?", 1000))
                .as("nothing to name it by")
                .isEqualTo("?");
        assertThat(EnvdConfig.processUser("user", 1000)).isEqualTo("user");
    }
}
