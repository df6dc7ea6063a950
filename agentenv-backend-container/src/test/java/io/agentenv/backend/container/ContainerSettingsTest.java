package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.lifecycle.ContainerSettings;
import io.agentenv.backend.container.runtime.ContainerSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerSettingsTest {

    private static final Path CWD = Path.of("/srv/aenv");

    @Test
    void defaults_allow_setuid_keep_two_warm_sandboxes_and_find_envd_under_the_workdir() {
        ContainerSettings settings = ContainerSettings.from(Map.of(), CWD);

        assertThat(settings.privileges()).isEqualTo(ContainerSpec.Privileges.ALLOW_SETUID);
        assertThat(settings.poolSize()).isEqualTo(2);
        assertThat(settings.envdDir()).isEqualTo(Path.of("/srv/aenv/agentenv-envd/target"));
        assertThat(settings.cpuCount()).isEqualTo(2);
        assertThat(settings.memoryMiB()).isEqualTo(512);
        assertThat(settings.diskMiB()).isEqualTo(10240);
        assertThat(settings.spareDisks()).isEqualTo(4);
        assertThat(settings.criuTimeout()).isEqualTo(Duration.ofSeconds(120));
        assertThat(settings.isolation()).isEmpty();
        assertThat(settings.idPrefix()).isEmpty();
    }

    @Test
    void no_new_privileges_true_enforces_no_new_privs_and_relative_paths_use_the_workdir() {
        ContainerSettings settings = ContainerSettings.from(
                Map.of(
                        "no_new_privileges",
                        "true",
                        "envd_dir",
                        "envd",
                        "memory_mb",
                        "1024",
                        "pool_size",
                        "0",
                        "spare_disks",
                        "0"),
                CWD);

        assertThat(settings.privileges()).isEqualTo(ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
        assertThat(settings.envdDir()).isEqualTo(Path.of("/srv/aenv/envd"));
        assertThat(settings.memoryMiB()).isEqualTo(1024);
        assertThat(settings.poolSize()).isZero();
        assertThat(settings.spareDisks()).isZero();
    }

    @Test
    void isolation_needs_its_three_names_together() {
        ContainerSettings settings = ContainerSettings.from(
                Map.of(
                        "name_prefix",
                        "aenvs",
                        "run_dir",
                        "/run/agentenv/x",
                        "cgroup_parent",
                        "agentenv-x",
                        "first_slot",
                        "8192"),
                CWD);

        assertThat(settings.isolation())
                .hasValue(new ContainerSettings.Isolation("aenvs", Path.of("/run/agentenv/x"), "agentenv-x", 8192));
        assertThatThrownBy(() -> ContainerSettings.from(Map.of("name_prefix", "aenvs"), CWD))
                .hasMessageContaining("go together");
        assertThatThrownBy(() -> ContainerSettings.from(Map.of("first_slot", "3"), CWD))
                .hasMessageContaining("AENV_BACKEND_FIRST_SLOT");
    }

    @Test
    void the_disk_size_follows_e2b_at_least_1024_and_a_multiple_of_1024() {
        assertThat(ContainerSettings.from(Map.of("disk_mb", "2048"), CWD).diskMiB())
                .isEqualTo(2048);
        for (String bad : new String[] {"512", "1500", "0", "-1024", "2097152"}) {
            assertThatThrownBy(() -> ContainerSettings.from(Map.of("disk_mb", bad), CWD))
                    .as(bad)
                    .hasMessageContaining("AENV_BACKEND_DISK_MB")
                    .hasMessageContaining("multiple of 1024");
        }
    }

    @Test
    void unknown_keys_and_bad_values_are_refused_with_the_variable_named() {
        assertThatThrownBy(() -> ContainerSettings.from(Map.of("memroy_mb", "1"), CWD))
                .hasMessageContaining("AENV_BACKEND_MEMROY_MB");
        assertThatThrownBy(() -> ContainerSettings.from(Map.of("cpu_count", "two"), CWD))
                .hasMessageContaining("AENV_BACKEND_CPU_COUNT must be a whole number");
        assertThatThrownBy(() -> ContainerSettings.from(Map.of("cpu_count", "0"), CWD))
                .hasMessageContaining("AENV_BACKEND_CPU_COUNT must be 1..64");
        assertThatThrownBy(() -> ContainerSettings.from(Map.of("no_new_privileges", "maybe"), CWD))
                .hasMessageContaining("must be true or false");
        assertThatThrownBy(() -> ContainerSettings.from(Map.of("spare_disks", "65"), CWD))
                .hasMessageContaining("AENV_BACKEND_SPARE_DISKS must be 0..64");
        assertThatThrownBy(() -> ContainerSettings.from(Map.of("id_prefix", "Bad/Prefix"), CWD))
                .hasMessageContaining("id_prefix");
    }
}
