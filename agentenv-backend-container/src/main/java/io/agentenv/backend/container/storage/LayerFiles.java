package io.agentenv.backend.container.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.ProcessRunner;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;

/**
 * Copies and moves of a sandbox's file trees (owned layers, uppers) between its sandbox dir, artifact dirs and template
 * images: hard links or renames where source and target share a filesystem, else {@code cp -a}.
 */
public final class LayerFiles {

    private static final Duration FILE_TIMEOUT = Duration.ofMinutes(5);

    private final ProcessRunner runner;

    public LayerFiles(ProcessRunner runner) {
        this.runner = requireNonNull(runner, "runner is null");
    }

    /**
     * Copies owned layers {@code from/<old>} to {@code to/<new>}: hard links where both are on one filesystem (layers
     * are never written to, so sharing inodes is safe and the cost grows with the number of files, not their size),
     * else a full copy.
     */
    public void copyLayers(Path from, Path to, List<String[]> renames)
            throws IOException, CommandFailedException, InterruptedException {
        if (renames.isEmpty()) {
            return;
        }
        Files.createDirectories(to);
        for (String[] rename : renames) {
            Path source = from.resolve(rename[0]);
            Path target = to.resolve(rename[1]);
            try {
                runner.run(Command.of(FILE_TIMEOUT, "cp", "-a", "-l", source.toString(), target.toString()));
            } catch (CommandFailedException crossDevice) {
                FileTrees.deleteTree(target);
                runner.run(
                        Command.of(FILE_TIMEOUT, "cp", "-a", "--reflink=auto", source.toString(), target.toString()));
            }
        }
    }

    /** Moves a directory (a rename on one filesystem, else copy and delete); nothing to do when it does not exist. */
    public void move(Path from, Path to) throws IOException, CommandFailedException, InterruptedException {
        if (!Files.exists(from, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.createDirectories(to.getParent());
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException crossDevice) {
            FileTrees.deleteTree(to);
            runner.run(Command.of(FILE_TIMEOUT, "cp", "-a", from.toString(), to.toString()));
            FileTrees.deleteTree(from);
        } catch (FileSystemException e) {
            if (e.getMessage() != null && e.getMessage().contains("cross-device")) {
                FileTrees.deleteTree(to);
                runner.run(Command.of(FILE_TIMEOUT, "cp", "-a", from.toString(), to.toString()));
                FileTrees.deleteTree(from);
            } else {
                throw e;
            }
        }
    }
}
