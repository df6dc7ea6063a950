package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.host.TestLane;
import io.agentenv.backend.container.lifecycle.ContainerSettings;
import io.agentenv.spi.BackendException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * A failing {@link ContainerBackendFactory#initialize} stops what it started before failing, and fails before starting
 * anything without what sandboxes need of the host.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerBackendInitHostTest {

    @Test
    void an_initialization_failing_unchecked_stops_the_spare_disk_refill_it_started() throws Exception {
        Optional<String> unready = HostLayout.unreadyReason(HostLayout.DEFAULT_HOST_ENV);
        HostFixture.requireHost(unready);
        try (TestLane lane = TestLane.claim()) {
            HostLayout layout = HostLayout.load(HostLayout.DEFAULT_HOST_ENV)
                    .isolatedAs(lane.namePrefix(), lane.runDir(), TestLane.CGROUP_PARENT);
            Path workDir = Files.createTempDirectory(Path.of("/var/tmp"), lane.dirPrefix());
            try {
                ContainerSettings settings = ContainerSettings.from(
                        Map.of(
                                "envd_dir", BackendFixture.envdDir().toString(),
                                "jdk_home", System.getProperty("java.home"),
                                "spare_disks", "2",
                                "disk_mb", "1024",
                                "pool_size", "0"),
                        Path.of("").toAbsolutePath());
                ContainerBackendFactory factory = new ContainerBackendFactory();
                int noSlotLeft =
                        layout.addressing().slotCount(); // the network pool refuses it: after the refill started

                assertThatThrownBy(() -> factory.initialize(
                                workDir, settings, layout, noSlotLeft, Optional.empty(), Optional.empty()))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("do not fit");

                // closing the spare disks joins their refill and removes their directory; left running, it fills it
                assertThat(workDir.resolve("spare-disks")).doesNotExist();
            } finally {
                HostFixture.deleteTree(workDir);
            }
        }
    }

    @Test
    void without_lxcfs_the_backend_refuses_to_start_rather_than_show_host_values() throws Exception {
        HostFixture.requireHost(HostLayout.unreadyReason(HostLayout.DEFAULT_HOST_ENV));
        try (TestLane lane = TestLane.claim()) {
            HostLayout layout = HostLayout.load(HostLayout.DEFAULT_HOST_ENV)
                    .isolatedAs(lane.namePrefix(), lane.runDir(), TestLane.CGROUP_PARENT);
            Path workDir = Files.createTempDirectory(Path.of("/var/tmp"), lane.dirPrefix());
            Path notMounted = Files.createDirectories(workDir.resolve("lxcfs"));
            try {
                ContainerSettings settings = ContainerSettings.from(
                        Map.of(
                                "envd_dir", BackendFixture.envdDir().toString(),
                                "jdk_home", System.getProperty("java.home"),
                                "lxcfs_dir", notMounted.toString(),
                                "pool_size", "0"),
                        Path.of("").toAbsolutePath());

                assertThatThrownBy(() -> new ContainerBackendFactory()
                                .initialize(
                                        workDir.resolve("work"),
                                        settings,
                                        layout,
                                        0,
                                        Optional.empty(),
                                        Optional.empty()))
                        .isInstanceOf(BackendException.Terminal.class)
                        .hasMessage("container backend: sandboxes cannot get their own /proc views: LXCFS is not"
                                + " mounted at " + notMounted
                                + "; run scripts/setup-host.sh as root (it starts lxcfs)");
                assertThat(workDir.resolve("work")).as("nothing made").doesNotExist();
            } finally {
                HostFixture.deleteTree(workDir);
            }
        }
    }
}
