package io.agentenv.backend.container.lifecycle;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.TextDigest;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.SharedFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The trees a {@link Lineage} names outside any one state (its shared layers, such as a template's boot layer, the
 * template's root filesystem and envd's distribution: absolute paths on the node that made the state), and how a state
 * restores on a machine that does not have them.
 *
 * <ul>
 *   <li><b>Keys.</b> A tree's key names the directory itself: 32 hex digits of SHA-256 over its path, device, inode and
 *       birth time. Every node on one machine computes the same key for the same directory; a directory rebuilt at the
 *       same path, or another machine's, has another key. A state records each tree's path and key
 *       ({@link SavedStates}). A copy this backend fetched is named by its key ({@code <work dir>/shared-files/<key>})
 *       and keeps that key.
 *   <li><b>Publishing</b> (a node of a cluster with shared storage): before a state can leave the node (a pause, a
 *       capture) each of its trees is stored in the {@link SharedFiles} unless it is there already; each key is looked
 *       up once per process, concurrent publications of one key wait for one, and nodes on one machine take turns
 *       through a lock file beside the tree ({@code .<name>.publishing}), so one of them stores it. A template's
 *       trees are published as soon as its boot image is ready, so a pause rarely waits for them.
 *   <li><b>Localizing</b>: a restore uses each tree where the state names it when the directory there has the recorded
 *       key (the same machine); else this backend's copy; else it fetches the copy from the shared storage (concurrent
 *       restores wait for one fetch) and restores on it. Without shared storage the state's paths stay as they are.
 * </ul>
 *
 * <p>Copies are kept for as long as the backend's work dir (like template boot images).
 */
public final class LineageFiles {

    private static final Logger log = LoggerFactory.getLogger(LineageFiles.class);

    private final Optional<SharedFiles> shared;
    private final Path copies;
    private final Map<String, CompletableFuture<Void>> published = new ConcurrentHashMap<>();
    private final Map<String, CompletableFuture<Path>> fetches = new ConcurrentHashMap<>();

    /**
     * @param shared the cluster's shared storage; empty for a lone server
     * @param copies where fetched copies go ({@code <work dir>/shared-files}), on the artifacts' filesystem
     */
    public LineageFiles(Optional<SharedFiles> shared, Path copies) {
        this.shared = requireNonNull(shared, "shared is null");
        this.copies = requireNonNull(copies, "copies is null").toAbsolutePath();
    }

    /** Whether states made here can be published (this node has shared storage). */
    boolean sharing() {
        return shared.isPresent();
    }

    /** The trees {@code lineage} names outside its states, topmost first. */
    static List<Path> trees(Lineage lineage) {
        List<Path> trees = new ArrayList<>();
        for (String layer : lineage.layers()) {
            if (!Lineage.isOwned(layer)) {
                trees.add(Path.of(layer));
            }
        }
        trees.add(lineage.template());
        trees.add(lineage.envdDir());
        return trees;
    }

    /**
     * Each tree of {@code lineage} (by path) and its key; empty for a lone server, whose states stay on its disk. A
     * tree that cannot be read is left out (logged): a state naming it restores only where it is.
     */
    Map<String, String> keys(Lineage lineage) {
        Map<String, String> keys = new LinkedHashMap<>();
        if (shared.isEmpty()) {
            return keys;
        }
        for (Path tree : trees(lineage)) {
            try {
                keys.put(tree.toString(), key(tree));
            } catch (IOException e) {
                log.atWarn().addKeyValue("path", tree).setCause(e).log("a file tree of a sandbox cannot be read");
            }
        }
        return keys;
    }

    /** The key of the directory {@code tree}. */
    String key(Path tree) throws IOException {
        if (copies.equals(tree.getParent())
                && SharedFiles.isValidKey(tree.getFileName().toString())) {
            return tree.getFileName().toString();
        }
        Map<String, Object> unix = Files.readAttributes(tree, "unix:dev,ino", NOFOLLOW_LINKS);
        BasicFileAttributes basic = Files.readAttributes(tree, BasicFileAttributes.class, NOFOLLOW_LINKS);
        if (!basic.isDirectory()) {
            throw new IOException("not a directory: " + tree);
        }
        String identity = String.join(
                "\n",
                "tree v1",
                tree.toString(),
                String.valueOf(unix.get("dev")),
                String.valueOf(unix.get("ino")),
                Long.toString(basic.creationTime().to(TimeUnit.NANOSECONDS)));
        return TextDigest.sha256Hex(identity, 32);
    }

    /**
     * Stores every tree of {@code keys} in the shared storage that is not there yet (a no-op for a lone server).
     *
     * @throws IOException if one could not be stored (the others may have been)
     */
    void publish(Map<String, String> keys) throws IOException {
        if (shared.isEmpty()) {
            return;
        }
        for (Map.Entry<String, String> tree : keys.entrySet()) {
            publish(tree.getValue(), Path.of(tree.getKey()));
        }
    }

    /** {@link #publish(Map)} of {@code lineage}'s trees on a virtual thread: failures are logged (a pause tries again). */
    void publishLater(Lineage lineage) {
        if (shared.isEmpty()) {
            return;
        }
        Thread.ofVirtual().name("publish-lineage").start(() -> {
            try {
                publish(keys(lineage));
            } catch (IOException e) {
                log.atWarn().setCause(e).log("a template's files could not be stored in the shared storage");
            }
        });
    }

    private void publish(String key, Path tree) throws IOException {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> publication = published.putIfAbsent(key, mine);
        if (publication == null) {
            // nodes on one machine share their trees (the host's templates): a lock beside the tree lets one of them
            // store it while the others wait and then find it stored
            Path lockFile = tree.resolveSibling("." + tree.getFileName() + ".publishing");
            try (FileChannel channel =
                    FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                channel.lock(); // released when the channel closes
                long started = System.nanoTime();
                if (!shared.get().contains(key)) {
                    shared.get().put(key, tree);
                    log.atInfo()
                            .addKeyValue("key", key)
                            .addKeyValue("path", tree)
                            .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                            .log("a file tree of sandboxes stored in the shared storage");
                }
                mine.complete(null);
                return;
            } catch (IOException | RuntimeException e) {
                published.remove(key, mine);
                mine.completeExceptionally(e);
                throw e;
            }
        }
        await(publication, "storing " + tree + " in the shared storage");
    }

    /**
     * {@code lineage} with each tree that is not here (by its key in {@code keys}) replaced by this backend's copy,
     * fetched from the shared storage first if need be. Trees without a key, and every tree of a lone server, stay
     * where the state names them.
     *
     * @throws BackendException.Terminal if a tree is neither here nor in the shared storage, or its fetch failed
     */
    Lineage localize(Lineage lineage, Map<String, String> keys) throws BackendException {
        if (keys.isEmpty()) {
            return lineage;
        }
        List<String> layers = new ArrayList<>();
        for (String layer : lineage.layers()) {
            layers.add(
                    Lineage.isOwned(layer) ? layer : local(Path.of(layer), keys).toString());
        }
        return new Lineage(layers, local(lineage.template(), keys), local(lineage.envdDir(), keys));
    }

    private Path local(Path tree, Map<String, String> keys) throws BackendException {
        String key = keys.get(tree.toString());
        if (key == null || !SharedFiles.isValidKey(key) || hasKey(tree, key)) {
            return tree;
        }
        Path copy = copies.resolve(key);
        if (Files.isDirectory(copy, NOFOLLOW_LINKS)) {
            return copy;
        }
        if (shared.isEmpty()) {
            return tree; // the restore reports it missing
        }
        CompletableFuture<Path> mine = new CompletableFuture<>();
        CompletableFuture<Path> fetch = fetches.putIfAbsent(key, mine);
        if (fetch != null) {
            try {
                return await(fetch, "fetching " + tree + " from the shared storage");
            } catch (IOException e) {
                throw new BackendException.Terminal(e.getMessage(), e);
            }
        }
        try {
            long started = System.nanoTime();
            Files.createDirectories(copies);
            if (!Files.isDirectory(copy, NOFOLLOW_LINKS)) {
                shared.get().get(key, copy);
            }
            log.atInfo()
                    .addKeyValue("key", key)
                    .addKeyValue("path", tree)
                    .addKeyValue("copy", copy)
                    .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                    .log("a file tree of a state fetched from the shared storage");
            mine.complete(copy);
            return copy;
        } catch (NoSuchFileException e) {
            mine.completeExceptionally(e);
            throw new BackendException.Terminal(
                    "a file tree of this state is neither on this machine nor in the shared storage: " + tree + " (key "
                            + key + ")",
                    e);
        } catch (IOException | RuntimeException e) {
            mine.completeExceptionally(e);
            throw new BackendException.Terminal("fetching " + tree + " from the shared storage failed: " + e, e);
        } finally {
            fetches.remove(key, mine); // a later restore finds the copy, or tries again
        }
    }

    private boolean hasKey(Path tree, String key) {
        try {
            return Files.isDirectory(tree, NOFOLLOW_LINKS) && key(tree).equals(key);
        } catch (IOException e) {
            return false;
        }
    }

    private static <T> T await(CompletableFuture<T> future, String what) throws IOException {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while " + what, e);
        } catch (ExecutionException e) {
            throw new IOException(what + " failed: " + e.getCause(), e.getCause());
        }
    }
}
