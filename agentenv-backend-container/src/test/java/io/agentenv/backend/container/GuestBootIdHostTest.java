package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.guest.GuestProcFiles;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code /proc/sys/kernel/random/boot_id} inside sandboxes ({@link GuestProcFiles}): each sandbox from the template has
 * its own, never the host's; a resume with memory, a fork child and a sandbox from a snapshot keep their source's; a
 * filesystem-only pause is a new boot with a new one; root inside cannot change it. The leak check after the test
 * proves that no sandbox dir (where the boot id files live) or mount is left.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
public class GuestBootIdHostTest {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final TemplateId BASE = new TemplateId("base");
    private static final String BOOT_ID = "/proc/sys/kernel/random/boot_id";
    private static final String UUID = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";

    @SharedBackend
    private static BackendFixture backend;

    private static LaunchSpec spec() {
        return new LaunchSpec(
                SandboxId.random(RANDOM),
                BASE,
                Map.of(),
                "user",
                new AccessToken("tok-" + RANDOM.nextInt()),
                NetworkPolicy.DEFAULT);
    }

    private static String bootId(LaunchSpec spec) throws Exception {
        return backend.exec(spec.id(), "cat", BOOT_ID);
    }

    private SandboxBackend pauseAndResume(SandboxBackend sandbox, LaunchSpec spec, PauseMode mode) throws Exception {
        Path dir = Files.createDirectories(
                backend.artifacts("boot-id-" + mode.name().toLowerCase(Locale.ROOT))); // as the orchestrator makes it
        PausedState paused = sandbox.pause(mode, dir);
        sandbox.close();
        SandboxBackend resumed =
                backend.launch(spec, new LaunchSource.Paused(backend.factory.decodePausedState(paused.encode(), dir)));
        FileTrees.deleteTree(dir); // a resume moved its files back; what is left are the images
        return resumed;
    }

    @Test
    void each_sandbox_has_a_boot_id_kept_by_memory_restores_renewed_by_filesystem_ones() throws Exception {
        String host = Files.readString(Path.of(BOOT_ID)).strip();
        LaunchSpec a = spec();
        LaunchSpec b = spec();
        SandboxBackend first = backend.launch(a, new LaunchSource.Template(BASE));
        backend.launch(b, new LaunchSource.Template(BASE));

        String own = bootId(a);
        assertThat(own).matches(UUID).isNotEqualTo(host).isNotEqualTo(bootId(b));
        assertThat(bootId(b)).matches(UUID).isNotEqualTo(host);
        assertThat(backend.execFailure(a.id(), "sh", "-c", "echo 00000000-0000-4000-8000-000000000000 > " + BOOT_ID)
                        .getMessage())
                .containsAnyOf("Read-only file system", "Permission denied");
        assertThat(bootId(a)).isEqualTo(own);

        Path snapshotDir = backend.artifacts("boot-id-snapshot");
        SnapshotState snapshot =
                backend.factory.decodeSnapshotState(first.snapshot(snapshotDir).encode(), snapshotDir);
        LaunchSpec child = spec();
        backend.launch(child, new LaunchSource.Snapshot(snapshot));
        assertThat(bootId(child))
                .as("a sandbox restored from a snapshot continues its source's boot")
                .isEqualTo(own);

        SandboxBackend resumed = pauseAndResume(first, a, PauseMode.WITH_MEMORY);
        assertThat(bootId(a)).as("a resume with memory is the same boot").isEqualTo(own);

        SandboxBackend rebooted = pauseAndResume(resumed, a, PauseMode.FILESYSTEM_ONLY);
        String renewed = bootId(a);
        assertThat(renewed)
                .as("a filesystem-only resume is a new boot")
                .matches(UUID)
                .isNotEqualTo(own)
                .isNotEqualTo(host);
        assertThat(backend.execFailure(a.id(), "sh", "-c", "echo 00000000-0000-4000-8000-000000000000 > " + BOOT_ID)
                        .getMessage())
                .containsAnyOf("Read-only file system", "Permission denied");

        pauseAndResume(rebooted, a, PauseMode.WITH_MEMORY);
        assertThat(bootId(a))
                .as("the cold boot's mount is kept by its checkpoint")
                .isEqualTo(renewed);
        FileTrees.deleteTree(snapshotDir);
    }
}
