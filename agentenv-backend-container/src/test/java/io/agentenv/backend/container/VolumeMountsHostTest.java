package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateId;
import io.agentenv.spi.VolumeMount;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Volumes bound into sandboxes: a host directory of the volume's content shared by the sandboxes that mount it, the
 * default user writing there, a read-only mount refusing writes, and the mount kept by a resume with memory and by a
 * restore of a snapshot (whose checkpoint names it), while the content stays out of every checkpoint.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
public class VolumeMountsHostTest {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final TemplateId BASE = new TemplateId("base");
    /** The guest default user's host id: guest uid 1000 under the fixture's guest id start. */
    private static final int USER_HOST_ID = 1_000_000_000 + 1000;

    @SharedBackend
    private static BackendFixture backend;

    private static LaunchSpec spec(List<VolumeMount> volumes) {
        return new LaunchSpec(
                SandboxId.random(RANDOM),
                BASE,
                Map.of(),
                "user",
                new AccessToken("tok-" + RANDOM.nextInt()),
                NetworkPolicy.DEFAULT,
                Optional.empty(),
                volumes);
    }

    /** A volume's content dir on the backend's filesystem, owned by the guests' default user, as a volume store makes. */
    private static Path volumeDir(String name) throws Exception {
        Path dir = Files.createDirectories(backend.artifacts("volume-" + name));
        Files.setAttribute(dir, "unix:uid", USER_HOST_ID);
        Files.setAttribute(dir, "unix:gid", USER_HOST_ID);
        return dir;
    }

    private static String asUser(LaunchSpec spec, String script) throws Exception {
        return backend.exec(spec.id(), "setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "sh", "-c", script);
    }

    @Test
    void two_sandboxes_share_a_volume_and_a_read_only_mount_refuses_writes() throws Exception {
        Path content = volumeDir("shared");
        LaunchSpec writer = spec(List.of(new VolumeMount("vol-shared", content, "/home/user/data", false)));
        LaunchSpec reader = spec(List.of(new VolumeMount("vol-shared", content, "/mnt/data", true)));
        backend.fresh(writer);
        backend.fresh(reader);

        asUser(writer, "echo from-writer > /home/user/data/note && mkdir /home/user/data/dir");

        assertThat(Files.readString(content.resolve("note"))).isEqualTo("from-writer\n");
        assertThat(Files.getAttribute(content.resolve("note"), "unix:uid")).isEqualTo(USER_HOST_ID);
        assertThat(backend.exec(reader.id(), "cat", "/mnt/data/note")).isEqualTo("from-writer");
        assertThat(backend.execFailure(reader.id(), "sh", "-c", "echo x > /mnt/data/other")
                        .getMessage())
                .contains("Read-only file system");
        Files.writeString(content.resolve("from-host"), "host\n");
        assertThat(asUser(writer, "cat /home/user/data/from-host")).isEqualTo("host");
        FileTrees.deleteTree(content);
    }

    @Test
    void a_resume_and_a_snapshot_restore_mount_the_volume_again_without_its_content() throws Exception {
        Path content = volumeDir("kept");
        List<VolumeMount> volumes = List.of(new VolumeMount("vol-kept", content, "/data", false));
        LaunchSpec source = spec(volumes);
        SandboxBackend running = backend.fresh(source);
        asUser(source, "echo before > /data/file");

        Path pausedDir = Files.createDirectories(backend.artifacts("volume-paused"));
        PausedState paused = running.pause(PauseMode.WITH_MEMORY, pausedDir);
        running.close();
        Files.writeString(content.resolve("file"), "while paused\n");
        SandboxBackend resumed = backend.launch(
                source, new LaunchSource.Paused(backend.factory.decodePausedState(paused.encode(), pausedDir)));
        assertThat(backend.exec(source.id(), "cat", "/data/file"))
                .as("the resumed sandbox reads the volume as it is now, not as it was at the pause")
                .isEqualTo("while paused");

        Path snapshotDir = Files.createDirectories(backend.artifacts("volume-snapshot"));
        SnapshotState snapshot = resumed.snapshot(snapshotDir);
        try (var images = Files.walk(snapshotDir)) {
            assertThat(images.filter(Files::isRegularFile).toList())
                    .as("no file of the volume is in the snapshot")
                    .noneMatch(f -> f.getFileName().toString().equals("file"));
        }
        LaunchSpec child = spec(volumes);
        backend.launch(
                child, new LaunchSource.Snapshot(backend.factory.decodeSnapshotState(snapshot.encode(), snapshotDir)));
        asUser(child, "echo from-child >> /data/file");
        assertThat(backend.exec(source.id(), "cat", "/data/file")).isEqualTo("while paused\nfrom-child");

        LaunchSpec without = spec(List.of());
        assertThatThrownBy(() -> backend.launch(
                        without,
                        new LaunchSource.Snapshot(backend.factory.decodeSnapshotState(snapshot.encode(), snapshotDir))))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("mounting volumes at [/data]");
        backend.closeLaunched();
        FileTrees.deleteTree(pausedDir);
        FileTrees.deleteTree(snapshotDir);
        FileTrees.deleteTree(content);
    }
}
