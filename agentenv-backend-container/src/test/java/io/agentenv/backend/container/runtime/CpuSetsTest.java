package io.agentenv.backend.container.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CpuSetsTest {

    @Test
    void kernel_cpu_lists_are_read_with_ranges_and_single_cpus() {
        assertThat(CpuSets.parse("0-3,8,10-11\n")).containsExactly(0, 1, 2, 3, 8, 10, 11);
        assertThat(CpuSets.parse("1")).containsExactly(1);
        assertThat(CpuSets.parse("")).isEmpty();
        assertThatThrownBy(() -> CpuSets.parse("0-x")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void sandboxes_take_the_hosts_cpus_in_turn_and_wrap_around() {
        CpuSets sets = new CpuSets(List.of(2, 3, 5));

        assertThat(sets.next(1)).contains("2");
        assertThat(sets.next(2)).contains("3,5");
        assertThat(sets.next(2)).contains("2,3");
        assertThat(sets.next(1)).contains("5");
    }

    @Test
    void a_sandbox_of_as_many_cpus_as_the_host_or_more_gets_every_cpu() {
        CpuSets sets = new CpuSets(List.of(0, 1));

        assertThat(sets.next(2)).isEqualTo(Optional.empty());
        assertThat(sets.next(8)).isEqualTo(Optional.empty());
        assertThatThrownBy(() -> sets.next(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new CpuSets(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void the_cgroup_parents_cpus_are_used_or_the_hosts_before_it_exists(@TempDir Path root) throws Exception {
        Files.writeString(root.resolve("cpuset.cpus"), "0-3\n");
        assertThat(CpuSets.of(root, "agentenv").hostCpus()).containsExactly(0, 1, 2, 3);

        Files.createDirectories(root.resolve("agentenv"));
        Files.writeString(root.resolve("agentenv/cpuset.cpus"), "1,3\n");
        assertThat(CpuSets.of(root, "agentenv").hostCpus()).containsExactly(1, 3);
    }
}
