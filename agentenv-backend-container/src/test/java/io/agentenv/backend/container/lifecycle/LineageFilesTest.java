package io.agentenv.backend.container.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.SharedFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LineageFilesTest {

    @TempDir
    Path tmp;

    private Path bootLayer;
    private Path rootfs;
    private Path envd;
    private Lineage lineage;
    private MemoryFiles store;

    @BeforeEach
    void setUp() throws IOException {
        bootLayer = tree("node-a/templates/base-1/layer", "tmp/boot.log", "booted");
        rootfs = tree("cache/templates/base/b1/rootfs", "etc/os-release", "debian");
        envd = tree("node-a/envd/e1", "agentenv-envd.jar", "jar");
        lineage = new Lineage(List.of("0", bootLayer.toString()), rootfs, envd);
        store = new MemoryFiles();
    }

    private Path tree(String dir, String file, String content) throws IOException {
        Path root = tmp.resolve(dir);
        Files.createDirectories(root.resolve(file).getParent());
        Files.writeString(root.resolve(file), content);
        return root;
    }

    private LineageFiles node(String name) {
        return new LineageFiles(Optional.of(store), tmp.resolve(name).resolve("shared-files"));
    }

    @Test
    void each_tree_outside_the_states_has_a_key_the_same_for_every_node_of_the_machine() throws Exception {
        Map<String, String> keys = node("node-a").keys(lineage);

        assertThat(keys).containsOnlyKeys(bootLayer.toString(), rootfs.toString(), envd.toString());
        assertThat(keys.values()).allMatch(SharedFiles::isValidKey).doesNotHaveDuplicates();
        assertThat(node("node-b").keys(lineage)).isEqualTo(keys);
        assertThat(new LineageFiles(Optional.empty(), tmp.resolve("alone")).keys(lineage))
                .as("a lone server's states stay on its disk")
                .isEmpty();
    }

    @Test
    void a_tree_rebuilt_at_the_same_path_has_another_key() throws Exception {
        LineageFiles files = node("node-a");
        String before = files.key(rootfs);

        FileTrees.deleteTree(rootfs);
        tree("cache/templates/base/b1/rootfs", "etc/os-release", "debian");

        assertThat(files.key(rootfs)).isNotEqualTo(before);
    }

    @Test
    void a_tree_is_stored_once_however_many_states_need_it() throws Exception {
        LineageFiles files = node("node-a");
        Map<String, String> keys = files.keys(lineage);

        files.publish(keys);
        files.publish(keys);
        node("node-b").publish(keys);

        assertThat(store.puts).hasSize(3);
        assertThat(store.trees.keySet()).containsExactlyInAnyOrderElementsOf(keys.values());
    }

    @Test
    void trees_that_are_here_are_used_where_they_are() throws Exception {
        LineageFiles files = node("node-a");
        Map<String, String> keys = files.keys(lineage);
        files.publish(keys);

        assertThat(node("node-b").localize(lineage, keys)).isEqualTo(lineage);
        assertThat(store.gets).isEmpty();
    }

    @Test
    void trees_that_are_not_here_are_fetched_once_and_keep_their_keys() throws Exception {
        LineageFiles a = node("node-a");
        Map<String, String> keys = a.keys(lineage);
        a.publish(keys);
        FileTrees.deleteTree(tmp.resolve("node-a")); // another machine: node a's boot layer and envd are not there
        LineageFiles b = node("node-b");

        Lineage local = b.localize(lineage, keys);
        Lineage again = b.localize(lineage, keys);

        Path copies = tmp.resolve("node-b/shared-files");
        assertThat(local.template()).isEqualTo(rootfs);
        assertThat(local.envdDir()).isEqualTo(copies.resolve(keys.get(envd.toString())));
        assertThat(local.layers())
                .containsExactly(
                        "0", copies.resolve(keys.get(bootLayer.toString())).toString());
        assertThat(Files.readString(local.envdDir().resolve("agentenv-envd.jar")))
                .isEqualTo("jar");
        assertThat(again).isEqualTo(local);
        assertThat(store.gets).hasSize(2);
        assertThat(b.keys(local).values())
                .as("a copy is published under its own key")
                .containsExactlyInAnyOrderElementsOf(keys.values());
    }

    @Test
    void concurrent_restores_wait_for_one_fetch() throws Exception {
        LineageFiles a = node("node-a");
        Map<String, String> keys = a.keys(lineage);
        a.publish(keys);
        FileTrees.deleteTree(tmp.resolve("node-a"));
        LineageFiles b = node("node-b");
        store.slowGets = new CountDownLatch(1);

        List<Future<Lineage>> restores = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 4; i++) {
                restores.add(threads.submit(() -> b.localize(lineage, keys)));
            }
            Thread.sleep(100);
            store.slowGets.countDown();
            for (Future<Lineage> restore : restores) {
                assertThat(restore.get()).isEqualTo(restores.getFirst().get());
            }
        }
        assertThat(store.gets).hasSize(2);
    }

    @Test
    void a_tree_neither_here_nor_stored_fails_the_restore_naming_it() throws Exception {
        Map<String, String> keys = node("node-a").keys(lineage); // never published
        FileTrees.deleteTree(tmp.resolve("node-a"));

        assertThatThrownBy(() -> node("node-b").localize(lineage, keys))
                .isInstanceOf(BackendException.Terminal.class)
                .hasMessageContaining("neither on this machine nor in the shared storage")
                .hasMessageContaining(bootLayer.toString());
        try (Stream<Path> left = Files.list(tmp.resolve("node-b/shared-files"))) {
            assertThat(left).as("nothing partial is left").isEmpty();
        }
    }

    @Test
    void a_lone_server_restores_from_the_paths_the_state_names() throws Exception {
        Map<String, String> keys = node("node-a").keys(lineage);
        FileTrees.deleteTree(tmp.resolve("node-a"));

        assertThat(new LineageFiles(Optional.empty(), tmp.resolve("alone")).localize(lineage, keys))
                .isEqualTo(lineage);
    }

    /** Shared storage in memory: each tree a map of relative file names to contents. */
    private static final class MemoryFiles implements SharedFiles {
        final Map<String, Map<Path, String>> trees = new HashMap<>();
        final List<String> puts = new ArrayList<>();
        final List<String> gets = new ArrayList<>();
        volatile CountDownLatch slowGets = new CountDownLatch(0);

        @Override
        public synchronized boolean contains(String key) {
            return trees.containsKey(key);
        }

        @Override
        public synchronized void put(String key, Path dir) throws IOException {
            Map<Path, String> files = new HashMap<>();
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path file : walk.filter(Files::isRegularFile).toList()) {
                    files.put(dir.relativize(file), Files.readString(file));
                }
            }
            trees.put(key, files);
            puts.add(key);
        }

        @Override
        public void get(String key, Path target) throws IOException {
            try {
                slowGets.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            Map<Path, String> files;
            synchronized (this) {
                files = trees.get(key);
                if (files == null) {
                    throw new NoSuchFileException(key);
                }
                gets.add(key);
            }
            for (Map.Entry<Path, String> file : files.entrySet()) {
                Path path = target.resolve(file.getKey());
                Files.createDirectories(path.getParent());
                Files.writeString(path, file.getValue());
            }
        }
    }
}
