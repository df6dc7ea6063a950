package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.guest.LxcfsViews;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.TemplateId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What sandboxes see when the LXCFS daemon dies and is started again, on a daemon of this test's own (the host's
 * serves every other sandbox and must not be touched): a running sandbox's views fail with ENOTCONN and stay so after
 * the restart (its binds hold the dead FUSE connection) while the rest of the sandbox runs on; a launch while the
 * daemon is gone fails and names it; a pause and resume, a restore that binds the files afresh, brings the views back.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
public class LxcfsRestartHostTest {

    private static final Duration READY = Duration.ofSeconds(60);
    private static final TemplateId BASE = new TemplateId("base");
    private static final String NOT_CONNECTED = "Transport endpoint is not connected";

    /** An LXCFS daemon run by this test in the foreground (its child), with the options the host setup gives it. */
    private static final class OwnLxcfs implements AutoCloseable {
        private final Path dir;
        private Process process;

        OwnLxcfs(Path dir) {
            this.dir = dir;
        }

        void start() throws IOException {
            Files.createDirectories(dir);
            process = new ProcessBuilder(
                            "lxcfs",
                            "--enable-cfs",
                            "--enable-loadavg",
                            "--pidfile",
                            dir.resolveSibling(dir.getFileName() + ".pid").toString(),
                            dir.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            HostFixture.await(
                    "LXCFS serves " + dir,
                    Duration.ofSeconds(10),
                    () -> new LxcfsViews(dir).unavailableReason().isEmpty());
        }

        /** Kills the daemon as a crash would: its mount stays, unanswered. */
        void crash() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor();
        }

        /** Unmounts what a crashed daemon left (lazily: sandboxes' binds of it stay theirs). */
        void unmountDead() throws Exception {
            new ProcessBuilder("umount", "-l", dir.toString())
                    .inheritIO()
                    .start()
                    .waitFor();
        }

        @Override
        public void close() throws Exception {
            if (process != null && process.isAlive()) {
                process.destroy(); // SIGTERM: it unmounts its mount itself
                process.waitFor();
            }
            if (new LxcfsViews(dir)
                    .unavailableReason()
                    .filter(r -> r.contains("not mounted"))
                    .isEmpty()) {
                unmountDead();
            }
            Files.deleteIfExists(dir.resolveSibling(dir.getFileName() + ".pid"));
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void views_fail_while_lxcfs_is_dead_and_come_back_with_the_next_restore() throws Exception {
        HostFixture.requireHost(HostLayout.unreadyReason(HostLayout.DEFAULT_HOST_ENV));
        Path dir = Path.of(
                "/run/agentenv/lxcfs-test-" + UUID.randomUUID().toString().substring(0, 8));
        List<SandboxBackend> opened = new ArrayList<>();
        try (OwnLxcfs lxcfs = new OwnLxcfs(dir)) {
            lxcfs.start();
            try (BackendFixture backend = BackendFixture.create(Map.of("lxcfs_dir", dir.toString()))) {
                try {
                    LaunchSpec spec = BackendFixture.baseSpec();
                    SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
                    opened.add(sandbox);
                    sandbox.start(READY);
                    String memTotal = "MemTotal: +262144 kB"; // the fixture's 256 MiB
                    assertThat(backend.exec(spec.id(), "grep", "^MemTotal:", "/proc/meminfo"))
                            .matches(memTotal);

                    lxcfs.crash();
                    assertThat(backend.execFailure(spec.id(), "cat", "/proc/meminfo")
                                    .getMessage())
                            .contains(NOT_CONNECTED);
                    assertThat(backend.exec(spec.id(), "sh", "-c", "echo $((6 * 7))"))
                            .as("the sandbox itself runs on")
                            .isEqualTo("42");
                    LaunchSpec refused = BackendFixture.baseSpec();
                    assertThatThrownBy(() -> {
                                SandboxBackend other =
                                        backend.factory.prepare(refused, new LaunchSource.Template(BASE));
                                opened.add(other);
                                other.start(READY);
                            })
                            .isInstanceOf(BackendException.class)
                            .hasMessageContaining(NOT_CONNECTED);

                    lxcfs.unmountDead();
                    lxcfs.start();
                    assertThat(backend.execFailure(spec.id(), "cat", "/proc/uptime")
                                    .getMessage())
                            .as("a running sandbox keeps the dead daemon's binds")
                            .contains(NOT_CONNECTED);

                    Path artifacts = Files.createDirectories(backend.workDir.resolve("artifacts-lxcfs"));
                    PausedState paused = sandbox.pause(PauseMode.WITH_MEMORY, artifacts);
                    sandbox.close();
                    SandboxBackend resumed = backend.factory.prepare(
                            spec,
                            new LaunchSource.Paused(backend.factory.decodePausedState(paused.encode(), artifacts)));
                    opened.add(resumed);
                    resumed.start(READY);
                    FileTrees.deleteTree(artifacts);
                    assertThat(backend.exec(spec.id(), "grep", "^MemTotal:", "/proc/meminfo"))
                            .as("a restore binds the running daemon's files")
                            .matches(memTotal);
                } finally {
                    for (SandboxBackend sandbox : opened) {
                        sandbox.close();
                    }
                }
                backend.assertNothingLeaked();
            }
        }
    }
}
