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
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The on-disk layout of backend artifacts, owned by the orchestrator:
 * {@code <root>/sandboxes/<sandbox id>/<generation>} for paused states,
 * {@code <root>/snapshots/<snapshot id>} for catalog snapshots and {@code <root>/forks/<sandbox id>-<generation>} for
 * the short-lived capture a fork restores its children from.
 */
final class Artifacts {
    private static final Logger log = LoggerFactory.getLogger(Artifacts.class);

    private final Path root;
    private final Ids ids;

    Artifacts(Path root, Ids ids) {
        this.root = requireNonNull(root, "root is null").toAbsolutePath();
        this.ids = requireNonNull(ids, "ids is null");
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
