package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class HostLayoutTest {

    private static final String HOST_ENV = """
            # Written by scripts/setup-host.sh
            AENV_CACHE_DIR=/var/cache/agentenv
            AENV_RUNC=/usr/sbin/runc
            AENV_CRIU=/var/cache/agentenv/criu/sbin/criu
            AENV_CRIU_RUNC_CONF=/var/cache/agentenv/criu-runc.conf
            AENV_TEMPLATES_DIR=%s
            AENV_RESOLV_CONF=/var/cache/agentenv/resolv.conf
            AENV_SANDBOX_CIDR=10.200.0.0/16
            AENV_NAME_PREFIX=aenv
            AENV_CGROUP_PARENT=agentenv
            AENV_CGROUP_ROOT=/sys/fs/cgroup
            AENV_SWAP_ACCOUNTING=1
            """;

    @Test
    void the_setup_facts_are_read_from_host_env(@TempDir Path dir) throws Exception {
        Path env = Files.writeString(dir.resolve("host.env"), HOST_ENV.formatted(dir.resolve("templates")));

        HostLayout layout = HostLayout.load(env);

        assertThat(layout.criu()).isEqualTo(Path.of("/var/cache/agentenv/criu/sbin/criu"));
        assertThat(layout.addressing().cidr()).isEqualTo("10.200.0.0/16");
        assertThat(layout.namePrefix()).isEqualTo("aenv");
        assertThat(layout.swapAccounting()).isTrue();
        assertThat(layout.runcRoot()).isEqualTo(Path.of("/run/agentenv/runc"));
    }

    @Test
    void a_missing_key_names_the_key_and_the_fix(@TempDir Path dir) throws Exception {
        Path env = Files.writeString(
                dir.resolve("host.env"),
                HOST_ENV.formatted(dir).replace("AENV_CRIU=/var/cache/agentenv/criu/sbin/criu\n", ""));

        assertThatThrownBy(() -> HostLayout.load(env))
                .hasMessageContaining("AENV_CRIU")
                .hasMessageContaining("setup-host.sh");
    }

    @Test
    void the_template_rootfs_is_the_build_its_current_link_points_at(@TempDir Path dir) throws Exception {
        Path env = Files.writeString(dir.resolve("host.env"), HOST_ENV.formatted(dir.resolve("templates")));
        Path build = Files.createDirectories(dir.resolve("templates/base/0123abcd/rootfs"));
        Files.createSymbolicLink(dir.resolve("templates/base/current"), Path.of("0123abcd"));

        HostLayout layout = HostLayout.load(env);

        assertThat(layout.templateRootfs("base")).isEqualTo(build.toRealPath());
        assertThatThrownBy(() -> layout.templateRootfs("missing")).hasMessageContaining("has not been built");
        assertThatThrownBy(() -> layout.templateRootfs("../etc")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void a_host_without_the_setup_is_reported_unready_with_a_reason(@TempDir Path dir) {
        assertThat(HostLayout.unreadyReason(dir.resolve("no-host.env")))
                .hasValueSatisfying(reason ->
                        assertThat(reason).containsAnyOf("setup-host.sh has not been run", "not running as root"));
    }

    @Test
    void an_isolated_layout_extends_the_hosts_prefix_without_overlapping_its_names(@TempDir Path dir) throws Exception {
        HostLayout layout = HostLayout.load(Files.writeString(dir.resolve("host.env"), HOST_ENV.formatted(dir)));

        HostLayout tests = layout.isolatedAs("aenvt3", Path.of("/run/agentenv/tests/3"), "agentenv-tests");

        assertThat(tests.namePrefix()).isEqualTo("aenvt3");
        assertThat(tests.runcRoot()).isEqualTo(Path.of("/run/agentenv/tests/3/runc"));
        assertThat(tests.cgroupParent()).isEqualTo("agentenv-tests");
        assertThatThrownBy(() -> layout.isolatedAs("other", Path.of("/x"), "y")).hasMessageContaining("extend");
        assertThatThrownBy(() -> layout.isolatedAs("aenvv1", Path.of("/x"), "y"))
                .hasMessageContaining("other than 'v'");
        assertThatThrownBy(() -> layout.isolatedAs("aenvt", layout.runDir(), "y"))
                .hasMessageContaining("own run dir");
    }
}
