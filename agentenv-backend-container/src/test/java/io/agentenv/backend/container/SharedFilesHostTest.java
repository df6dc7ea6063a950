package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.MountTable;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SharedFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A paused sandbox's state resumed by a backend that does not have the files its node made it on (its template's boot
 * layer and envd's distribution), as on another machine of a cluster: they come from the shared storage.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SharedFilesHostTest {

    private Path storeDir;
    private DirectoryFiles store;
    private BackendFixture backend;

    @BeforeEach
    void setUp() throws Exception {
        storeDir = Files.createTempDirectory(Path.of("/var/tmp"), "aenv-shared-files-");
        store = new DirectoryFiles(storeDir);
        backend = BackendFixture.createSharing(store);
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            if (backend != null) {
                backend.close();
            }
        } finally {
            FileTrees.deleteTree(storeDir);
        }
    }

    @Test
    void a_paused_sandbox_resumes_where_its_template_files_are_not() throws Exception {
        // given a sandbox with a file and a background process, paused with memory on a node of a cluster
        LaunchSpec spec = BackendFixture.baseSpec();
        SandboxBackend sandbox = backend.fresh(spec);
        backend.exec(spec.id(), "sh", "-c", "echo kept > /home/user/note");
        String sleeper = ContainerBackendHostTest.background(sandbox, spec);
        Path dir = backend.workDir.resolve("artifacts-paused");
        byte[] state = sandbox.pause(PauseMode.WITH_MEMORY, dir).encode();
        sandbox.close();
        backend.factory.deferredReleases().awaitAll();
        // and its node's own template files gone, as on another machine (the template's root filesystem is the host's,
        // the same directory for both backends here)
        Files.move(backend.workDir.resolve("templates"), backend.workDir.resolve("templates-elsewhere"));
        Files.move(backend.workDir.resolve("envd"), backend.workDir.resolve("envd-elsewhere"));

        // when a backend with another work dir resumes it
        Path otherWorkDir = backend.newWorkDir();
        List<SandboxBackend> opened = new ArrayList<>();
        ContainerBackendFactory other = backend.onAnotherWorkDir(otherWorkDir);
        try {
            SandboxBackend resumed = other.prepare(spec, new LaunchSource.Paused(other.decodePausedState(state, dir)));
            opened.add(resumed);
            resumed.start(BackendFixture.READY);

            // then the boot layer and envd came from the shared storage, the host's root filesystem did not, and the
            // sandbox has its file and its process
            assertThat(store.fetched).hasSize(2);
            try (var copies = Files.list(otherWorkDir.resolve("shared-files"))) {
                assertThat(copies.map(p -> p.getFileName().toString()).sorted().toList())
                        .containsExactlyElementsOf(
                                store.fetched.stream().sorted().toList());
            }
            assertThat(backend.exec(spec.id(), "cat", "/home/user/note")).isEqualTo("kept");
            assertThat(backend.exec(spec.id(), "cat", "/proc/" + sleeper + "/comm"))
                    .isEqualTo("sleep");

            // and a second pause there stores nothing again: its copies keep their keys
            int stored = store.stored.size();
            Path again = otherWorkDir.resolve("artifacts-again");
            opened.remove(resumed);
            resumed.pause(PauseMode.WITH_MEMORY, again);
            resumed.close();
            other.deferredReleases().awaitAll();
            assertThat(store.stored).hasSize(stored);
        } finally {
            for (SandboxBackend s : opened) {
                s.close();
            }
            other.shutdown();
            for (Path mount : MountTable.mountsUnder(otherWorkDir)) {
                other.overlays().unmount(mount);
            }
            FileTrees.deleteTree(otherWorkDir);
            FileTrees.deleteTree(dir);
        }
        backend.assertNothingLeaked();
    }

    /**
     * Shared storage in a directory: a tree is stored as hard links ({@code cp -al}: the trees stored never change) and
     * fetched as a copy.
     */
    static final class DirectoryFiles implements SharedFiles {
        final List<String> stored = new ArrayList<>();
        final List<String> fetched = new ArrayList<>();
        private final Path dir;

        DirectoryFiles(Path dir) {
            this.dir = dir;
        }

        @Override
        public synchronized boolean contains(String key) {
            return Files.isDirectory(dir.resolve(key));
        }

        @Override
        public synchronized void put(String key, Path tree) throws IOException {
            Path partial = dir.resolve(key + ".partial");
            copy("-al", tree, partial);
            Files.move(partial, dir.resolve(key));
            stored.add(key);
        }

        @Override
        public synchronized void get(String key, Path target) throws IOException {
            if (!contains(key)) {
                throw new NoSuchFileException(key);
            }
            Path partial = target.resolveSibling(target.getFileName() + ".partial");
            copy("-a", dir.resolve(key), partial);
            Files.move(partial, target);
            fetched.add(key);
        }

        private static void copy(String how, Path from, Path to) throws IOException {
            try {
                Process cp = new ProcessBuilder("cp", how, from.toString(), to.toString())
                        .inheritIO()
                        .start();
                if (!cp.waitFor(5, TimeUnit.MINUTES) || cp.exitValue() != 0) {
                    cp.destroyForcibly();
                    throw new IOException("cp " + how + " " + from + " failed");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
    }
}
