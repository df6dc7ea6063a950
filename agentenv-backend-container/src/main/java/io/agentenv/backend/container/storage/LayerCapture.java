package io.agentenv.backend.container.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ProcessRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

/**
 * Turns a sandbox's overlay upper dir into an immutable layer that later overlays stack as a lower dir (snapshot and
 * fork). The copy keeps what overlayfs encodes in the upper: whiteout devices (deletions), the opaque-directory and
 * other {@code trusted.overlay.*} xattrs, owners, modes and timestamps ({@code cp -a}, reflinked where the filesystem
 * can). It is made in a temporary directory next to the target and renamed into place, so a layer is complete or
 * absent. The upper must not change meanwhile: freeze the sandbox, or take it stopped.
 */
public final class LayerCapture {

    private final ProcessRunner runner;
    private final Duration timeout;

    public LayerCapture(ProcessRunner runner, Duration timeout) {
        this.runner = requireNonNull(runner, "runner is null");
        this.timeout = requireNonNull(timeout, "timeout is null");
    }

    /** Copies {@code upper} to the new directory {@code layer} (which must not exist). */
    public void capture(Path upper, Path layer) throws IOException, CommandFailedException, InterruptedException {
        if (!Files.isDirectory(upper)) {
            throw new IOException("no upper dir to capture: " + upper);
        }
        if (Files.exists(layer)) {
            throw new IOException("layer already exists: " + layer);
        }
        Files.createDirectories(layer.getParent());
        Path partial = layer.resolveSibling("." + layer.getFileName() + ".partial");
        deleteIfPresent(partial);
        try {
            runner.run(Command.of(timeout, "cp", "-a", "--reflink=auto", upper.toString(), partial.toString()));
            Files.move(partial, layer, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | CommandFailedException | InterruptedException | RuntimeException e) {
            deleteIfPresent(partial);
            throw e;
        }
    }

    private void deleteIfPresent(Path dir) throws IOException, CommandFailedException, InterruptedException {
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            runner.run(Command.of(timeout, "rm", "-rf", "--one-file-system", "--", dir.toString()));
        }
    }
}
