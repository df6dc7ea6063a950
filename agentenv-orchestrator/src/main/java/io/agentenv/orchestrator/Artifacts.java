package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The on-disk layout of backend artifacts, owned by the orchestrator:
 * {@code <root>/sandboxes/<sandbox id>/<generation>} for paused states,
 * {@code <root>/snapshots/<snapshot id>} for catalog snapshots and {@code <root>/forks/<sandbox id>-<generation>} for
 * the short-lived capture a fork restores its children from.
 *
 * <p>With {@link SharedArtifacts} (a node of a cluster), paused states and snapshots are also stored there under the
 * same relative path, and a state recorded by another node (its directory is not under this root) is fetched to the
 * same relative path under this root before use; the local copy of a state made here is used as it is.
 */
final class Artifacts {
    private static final Logger log = LoggerFactory.getLogger(Artifacts.class);
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-]{1,128}");

    private final Path root;
    private final Ids ids;
    private final Optional<SharedArtifacts> shared;
    /** One lock per key being fetched, so that concurrent launches from one snapshot fetch it once. */
    private final ConcurrentHashMap<String, Object> fetching = new ConcurrentHashMap<>();

    Artifacts(Path root, Ids ids) {
        this(root, ids, Optional.empty());
    }

    Artifacts(Path root, Ids ids, Optional<SharedArtifacts> shared) {
        this.root = requireNonNull(root, "root is null").toAbsolutePath();
        this.ids = requireNonNull(ids, "ids is null");
        this.shared = requireNonNull(shared, "shared is null");
    }

    Path newPausedDir(SandboxId id) {
        return create(root.resolve("sandboxes").resolve(id.value()).resolve(ids.newGeneration()));
    }

    Path newForkDir(SandboxId id) {
        return create(root.resolve("forks").resolve(id.value() + "-" + ids.newGeneration()));
    }

    Path snapshotDir(TemplateId snapshot) {
        return create(root.resolve("snapshots").resolve(snapshot.value()));
    }

    /** Whether paused states and snapshots are stored where every node reaches them. */
    boolean shared() {
        return shared.isPresent();
    }

    /**
     * Stores a paused state's or a snapshot's directory (made here, complete) in the shared storage; nothing without
     * one.
     *
     * @throws IOException if the shared storage failed
     */
    void share(Path dir) throws IOException {
        if (shared.isPresent()) {
            shared.get().put(key(dir), dir);
        }
    }

    /**
     * The directory to restore a state recorded as {@code stored} from, on this node: {@code stored} itself without
     * shared storage; else this node's copy ({@code stored} when it was made here, else its place under this root),
     * fetched from the shared storage when it is not on this disk (made elsewhere, or lost here). Reads and writes
     * files: never call it holding a lock.
     *
     * @throws AgentEnvException INTERNAL if the shared storage does not hold the state, UPSTREAM_FAILED if it failed
     */
    Path local(Path stored) {
        if (shared.isEmpty()) {
            return stored;
        }
        Path local = localCopy(stored);
        String key = key(stored);
        Object lock = fetching.computeIfAbsent(key, k -> new Object());
        synchronized (lock) {
            if (Files.isDirectory(local, LinkOption.NOFOLLOW_LINKS)) {
                return local;
            }
            long started = System.nanoTime();
            try {
                shared.get().get(key, local);
            } catch (NoSuchFileException e) {
                throw new AgentEnvException(
                        ErrorKind.INTERNAL,
                        "the artifacts " + key + " are not in the shared storage (the node that made them could not"
                                + " store them); they can be restored only there",
                        e);
            } catch (IOException | RuntimeException e) {
                throw new AgentEnvException(
                        ErrorKind.UPSTREAM_FAILED, "fetching the artifacts " + key + " from shared storage failed", e);
            }
            log.atInfo()
                    .addKeyValue("key", key)
                    .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                    .log("artifacts fetched from shared storage");
            return local;
        }
    }

    /**
     * Where this node keeps its copy of a state recorded as {@code stored}: {@code stored} when made here, else its
     * place under this root (present or not).
     */
    Path localCopy(Path stored) {
        return shared.isEmpty() || isLocal(stored) ? stored : root.resolve(key(stored));
    }

    /**
     * Deletes a state that is no longer needed (its sandbox resumed, its snapshot deleted): this node's copy (the
     * directory recorded, when it was made here) and the shared copy. Failures are logged, never thrown.
     */
    void deleteState(Path stored) {
        delete(localCopy(stored)); // the directory recorded when it was made here, else this node's copy
        if (shared.isPresent()) {
            String key = key(stored);
            fetching.remove(key);
            try {
                shared.get().delete(key);
            } catch (IOException | RuntimeException e) {
                log.atWarn().addKeyValue("key", key).setCause(e).log("cannot delete shared artifacts");
            }
        }
    }

    /**
     * With shared storage: deletes this node's copies of states that other nodes took over: paused states of sandboxes
     * this node no longer owns (resumed or killed elsewhere) and copies of snapshots that were deleted. The directories
     * are listed before {@code ownSandboxes} is asked, so a sandbox paused here meanwhile is never swept (its record
     * was this node's when its directory appeared). Failures are logged.
     */
    void sweepCopies(Supplier<Set<String>> ownSandboxes, Predicate<String> snapshotExists) {
        if (shared.isEmpty()) {
            return;
        }
        List<Path> sandboxes = list(root.resolve("sandboxes"));
        List<Path> snapshots = list(root.resolve("snapshots"));
        Set<String> own = ownSandboxes.get();
        for (Path dir : sandboxes) {
            if (!own.contains(dir.getFileName().toString())) {
                log.atInfo().addKeyValue("dir", dir).log("removing the paused state of a sandbox another node took");
                delete(dir);
            }
        }
        for (Path dir : snapshots) {
            if (!snapshotExists.test(dir.getFileName().toString())) {
                log.atInfo().addKeyValue("dir", dir).log("removing the copy of a deleted snapshot");
                delete(dir);
            }
        }
    }

    /** The entries of {@code dir} named like ids (not temporary names); none when it is missing or unreadable. */
    private static List<Path> list(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(
                            p -> SEGMENT.matcher(p.getFileName().toString()).matches())
                    .toList();
        } catch (IOException | UncheckedIOException e) {
            log.atWarn().addKeyValue("dir", dir).setCause(e).log("cannot list artifacts");
            return List.of();
        }
    }

    /** Deletes every shared paused state of the sandbox (a paused sandbox killed); logged, never thrown. */
    void unshareSandbox(SandboxId id) {
        if (shared.isEmpty()) {
            return;
        }
        try {
            shared.get().deleteAll("sandboxes/" + id.value() + "/");
        } catch (IOException | RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e)
                    .log("cannot delete the shared paused states of a killed sandbox");
        }
    }

    /** Deletes every paused state of the sandbox. */
    void deleteSandbox(SandboxId id) {
        delete(root.resolve("sandboxes").resolve(id.value()));
    }

    /** Deletes a directory tree; a failure is logged, never thrown (it must not undo a completed operation). */
    void delete(Path dir) {
        try {
            deleteTree(dir);
        } catch (IOException | UncheckedIOException e) {
            log.atWarn().addKeyValue("dir", dir).setCause(e).log("cannot delete artifacts");
        }
    }

    /**
     * After restart recovery: removes artifact directories no record refers to (left by operations that were
     * interrupted by a crash). {@code keep} holds the paused and snapshot directories still referenced.
     */
    void sweepOrphans(Set<Path> keep) {
        Set<Path> kept =
                keep.stream().map(Path::toAbsolutePath).map(Path::normalize).collect(Collectors.toSet());
        for (String area : new String[] {"sandboxes", "snapshots", "forks"}) {
            Path dir = root.resolve(area);
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
                for (Path entry : entries) {
                    if (area.equals("sandboxes") && Files.isDirectory(entry)) {
                        sweepChildren(entry, kept);
                    } else if (!kept.contains(entry.normalize())) {
                        log.atInfo().addKeyValue("dir", entry).log("removing orphaned artifacts");
                        delete(entry);
                    }
                }
            } catch (IOException e) {
                log.atWarn().addKeyValue("dir", dir).setCause(e).log("cannot sweep artifacts");
            }
        }
    }

    private void sweepChildren(Path sandboxDir, Set<Path> kept) throws IOException {
        boolean empty = true;
        try (DirectoryStream<Path> generations = Files.newDirectoryStream(sandboxDir)) {
            for (Path generation : generations) {
                if (kept.contains(generation.normalize())) {
                    empty = false;
                } else {
                    log.atInfo().addKeyValue("dir", generation).log("removing orphaned artifacts");
                    delete(generation);
                }
            }
        }
        if (empty) {
            delete(sandboxDir);
        }
    }

    private boolean isLocal(Path dir) {
        return dir.toAbsolutePath().normalize().startsWith(root);
    }

    /**
     * The shared key of a paused state's or snapshot's directory, wherever its root is: its last three segments
     * ({@code sandboxes/<id>/<generation>}) or two ({@code snapshots/<id>}).
     */
    static String key(Path dir) {
        Path normal = dir.toAbsolutePath().normalize();
        int n = normal.getNameCount();
        if (n >= 3 && normal.getName(n - 3).toString().equals("sandboxes")) {
            return "sandboxes/" + segment(normal, n - 2) + "/" + segment(normal, n - 1);
        }
        if (n >= 2 && normal.getName(n - 2).toString().equals("snapshots")) {
            return "snapshots/" + segment(normal, n - 1);
        }
        throw new IllegalArgumentException("not a paused state's or a snapshot's directory: " + dir);
    }

    private static String segment(Path dir, int index) {
        String name = dir.getName(index).toString();
        if (!SEGMENT.matcher(name).matches()) {
            throw new IllegalArgumentException("unexpected name in an artifact directory: " + dir);
        }
        return name;
    }

    private static Path create(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "cannot create an artifact directory", e);
        }
    }

    /**
     * Deletes {@code dir} and everything under it, never following a symbolic link: a link (the root included) is
     * removed as a link, its target is left alone. Paused states hold the sandbox's own files (its layers), which its
     * user controls, so a link to {@code /} in there must cost nothing but the link. Entries that vanish meanwhile are
     * not errors. (envd's {@code LocalFilesystem.remove} has its own copy of this walk: a module shared by the guest
     * agent and the server for twenty lines would cost more than it saves.)
     */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        // no FileVisitOption.FOLLOW_LINKS: links are visited as files (visitFile), never entered
        Files.walkFileTree(dir, EnumSet.noneOf(FileVisitOption.class), Integer.MAX_VALUE, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null && !(e instanceof NoSuchFileException)) {
                    throw e;
                }
                Files.deleteIfExists(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
