package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Paused states and snapshots in shared storage: stored when made, fetched by a node whose disk does not hold them
 * (another node, simulated by a restart on another artifact root with the first one gone), deleted when consumed.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class OrchestratorSharedArtifactsTest {
    @TempDir
    Path dir;

    private DirectoryShared shared;
    private OrchestratorHarness h;

    @BeforeEach
    void open() throws IOException {
        shared = new DirectoryShared(Files.createDirectory(dir.resolve("shared")));
        h = new OrchestratorHarness(Files.createDirectory(dir.resolve("node")), shared);
    }

    @AfterEach
    void close() {
        h.close();
    }

    @Test
    void a_paused_sandbox_resumes_from_shared_storage_on_another_disk() throws Exception {
        SandboxId id = h.create();
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        Path stored = h.store.get(id).orElseThrow().paused().orElseThrow().artifactDir();
        String key = "sandboxes/" + id.value() + "/" + stored.getFileName();
        assertThat(shared.keys()).containsExactly(key);

        Path firstDisk = h.artifactRoot();
        h.restartOnAnotherDisk("artifacts-b");
        Artifacts.deleteTree(firstDisk);
        ConnectResult resumed = h.orchestrator.connect(id, Duration.ofSeconds(30));

        assertThat(resumed.view().state()).isEqualTo(SandboxState.RUNNING);
        assertThat(shared.gets.get()).isEqualTo(1);
        assertThat(shared.keys()).isEmpty(); // consumed by the resume
        assertThat(h.artifactRoot().resolve(key)).doesNotExist();
    }

    @Test
    void a_paused_state_lost_on_its_own_disk_comes_back_from_shared_storage() throws Exception {
        SandboxId id = h.create();
        h.orchestrator.pause(id, PauseMode.FILESYSTEM_ONLY);
        Path stored = h.store.get(id).orElseThrow().paused().orElseThrow().artifactDir();
        Artifacts.deleteTree(stored);

        assertThat(h.orchestrator.connect(id, Duration.ofSeconds(30)).view().state())
                .isEqualTo(SandboxState.RUNNING);
        assertThat(shared.gets.get()).isEqualTo(1);
    }

    @Test
    void killing_a_paused_sandbox_deletes_its_shared_state() throws Exception {
        SandboxId id = h.create();
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        assertThat(shared.keys()).hasSize(1);

        h.orchestrator.kill(id);

        assertThat(shared.keys()).isEmpty();
    }

    @Test
    void a_pause_the_shared_storage_refuses_still_pauses_and_resumes_here_only() throws Exception {
        shared.failPuts.set(true);
        SandboxId id = h.create();
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        assertThat(shared.keys()).isEmpty();

        Path firstDisk = h.artifactRoot();
        h.restartOnAnotherDisk("artifacts-b");
        Artifacts.deleteTree(firstDisk);

        assertThatThrownBy(() -> h.orchestrator.connect(id, Duration.ofSeconds(30)))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.INTERNAL);
                    assertThat(e.getMessage()).contains("not in the shared storage");
                });
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
    }

    @Test
    void a_snapshot_starts_from_shared_storage_once_fetched_and_goes_everywhere() throws Exception {
        SandboxId source = h.create();
        SnapshotView snapshot = h.orchestrator.snapshot(source, Optional.of("shared-snap"));
        assertThat(shared.keys()).containsExactly("snapshots/" + snapshot.id().value());

        Path firstDisk = h.artifactRoot();
        h.restartOnAnotherDisk("artifacts-b");
        Artifacts.deleteTree(firstDisk);
        SandboxView first = h.orchestrator.create(CreateSandbox.of("shared-snap", Duration.ofSeconds(60)));
        SandboxView second = h.orchestrator.create(CreateSandbox.of("shared-snap", Duration.ofSeconds(60)));
        Path copy = h.artifactRoot().resolve("snapshots").resolve(snapshot.id().value());

        assertThat(List.of(first.state(), second.state())).containsOnly(SandboxState.RUNNING);
        assertThat(shared.gets.get()).isEqualTo(1);
        assertThat(copy).isDirectory();

        assertThat(h.orchestrator.deleteTemplate("shared-snap")).isTrue();
        assertThat(shared.keys()).isEmpty();
        assertThat(copy).doesNotExist();
    }

    @Test
    void a_snapshot_the_shared_storage_refuses_is_not_taken() {
        shared.failPuts.set(true);
        SandboxId source = h.create();

        assertThatThrownBy(() -> h.orchestrator.snapshot(source, Optional.of("unshared")))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED));
        assertThat(h.state(source)).isEqualTo(SandboxState.RUNNING);
        assertThatThrownBy(() -> h.orchestrator.create(CreateSandbox.of("unshared", Duration.ofSeconds(60))))
                .isInstanceOf(AgentEnvException.class);
        assertThat(h.artifactRoot().resolve("snapshots")).isEmptyDirectory();
    }

    @Test
    void copies_of_states_other_nodes_took_over_are_swept_and_own_ones_kept() throws Exception {
        SandboxId kept = h.create();
        h.orchestrator.pause(kept, PauseMode.WITH_MEMORY);
        SandboxId taken = h.create();
        h.orchestrator.pause(taken, PauseMode.WITH_MEMORY);
        SnapshotView snapshot = h.orchestrator.snapshot(h.create(), Optional.empty());
        Path sandboxes = h.artifactRoot().resolve("sandboxes");
        Path snapshots = h.artifactRoot().resolve("snapshots");

        // another node resumed one sandbox (its record is no longer this node's) and deleted the snapshot
        h.store.delete(taken, java.util.EnumSet.allOf(SandboxState.class));
        h.store.deleteSnapshot(snapshot.id());
        h.orchestrator.sweepArtifactCopies();

        assertThat(sandboxes.resolve(kept.value())).isDirectory();
        assertThat(sandboxes.resolve(taken.value())).doesNotExist();
        assertThat(snapshots.resolve(snapshot.id().value())).doesNotExist();
        assertThat(h.orchestrator.connect(kept, Duration.ofSeconds(30)).view().state())
                .isEqualTo(SandboxState.RUNNING);
    }

    /** Shared storage in a directory, trees copied whole. */
    private static final class DirectoryShared implements SharedArtifacts {
        final Path root;
        final AtomicInteger gets = new AtomicInteger();
        final AtomicBoolean failPuts = new AtomicBoolean();

        DirectoryShared(Path root) {
            this.root = root;
        }

        @Override
        public void put(String key, Path dir) throws IOException {
            if (failPuts.get()) {
                throw new IOException("shared storage unreachable");
            }
            copy(dir, root.resolve(key));
        }

        @Override
        public void get(String key, Path target) throws IOException {
            Path source = root.resolve(key);
            if (!Files.isDirectory(source)) {
                throw new NoSuchFileException(key);
            }
            gets.incrementAndGet();
            copy(source, target);
        }

        @Override
        public void delete(String key) throws IOException {
            Artifacts.deleteTree(root.resolve(key));
        }

        @Override
        public void deleteAll(String prefix) throws IOException {
            Artifacts.deleteTree(root.resolve(prefix));
        }

        /** The keys stored: directories holding files. */
        Set<String> keys() throws IOException {
            TreeSet<String> keys = new TreeSet<>();
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(Files::isRegularFile)
                        .forEach(f -> keys.add(root.relativize(f.getParent()).toString()));
            }
            return keys;
        }

        private static void copy(Path from, Path to) throws IOException {
            Files.createDirectories(to);
            try (Stream<Path> files = Files.walk(from)) {
                for (Path file : files.toList()) {
                    Path target = to.resolve(from.relativize(file).toString());
                    if (Files.isDirectory(file)) {
                        Files.createDirectories(target);
                    } else {
                        Files.copy(file, target);
                    }
                }
            }
        }
    }
}
