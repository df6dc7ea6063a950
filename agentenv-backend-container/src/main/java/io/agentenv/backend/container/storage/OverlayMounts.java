package io.agentenv.backend.container.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.CommandFailedException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A sandbox's root filesystem: overlayfs with read-only lower layers (template, then snapshot layers on top) and a
 * per-sandbox upper and work directory, mounted and unmounted by system calls ({@link Mounts}, {@link Unmounts}). The
 * bottom layer, a template's rootfs or an unpacked image owned by the host's ids, is used through its
 * {@link IdmappedViews idmapped view}; the layers above it were written by sandboxes and hold the guests' host ids
 * already. The upper dir belongs to the guest's root, so that the sandbox's root owns its {@code /}.
 */
public final class OverlayMounts {
    private final IdmappedViews views;

    public OverlayMounts(IdmappedViews views) {
        this.views = requireNonNull(views, "views is null");
    }

    /**
     * Mounts the overlay at {@code target}, creating upper, work and target when missing.
     *
     * @param lowers read-only layers, topmost first, the bottom one a tree owned by the host's ids (e.g. [snapshot
     *     layer, template rootfs])
     */
    public void mount(List<Path> lowers, Path upper, Path work, Path target)
            throws IOException, CommandFailedException, InterruptedException {
        if (lowers.isEmpty()) {
            throw new IllegalArgumentException("an overlay needs at least one lower layer");
        }
        lowers.forEach(OverlayMounts::requireSafe);
        requireSafe(upper);
        requireSafe(work);
        requireSafe(target);
        for (Path lower : lowers) {
            if (!Files.isDirectory(lower)) {
                throw new IOException("lower layer is not a directory: " + lower);
            }
        }
        Files.createDirectories(upper);
        int guestRoot = views.ids().host(0);
        Files.setAttribute(upper, "unix:uid", guestRoot);
        Files.setAttribute(upper, "unix:gid", guestRoot);
        Files.createDirectories(work);
        Files.createDirectories(target);
        List<Path> mapped = new java.util.ArrayList<>(lowers.subList(0, lowers.size() - 1));
        mapped.add(views.view(lowers.getLast()));
        String options = "lowerdir=" + mapped.stream().map(Path::toString).collect(Collectors.joining(":"))
                + ",upperdir=" + upper + ",workdir=" + work;
        Mounts.overlay(options, target);
    }

    /** Unmounts {@code target} (a system call, no process); nothing to do when it is not mounted. */
    public void unmount(Path target) throws IOException, CommandFailedException, InterruptedException {
        Unmounts.unmount(target);
    }

    /** overlayfs splits its options at ',' and ':'; reject paths that would be misread rather than escape them. */
    private static void requireSafe(Path path) {
        requireNonNull(path, "path is null");
        String s = path.toString();
        if (!path.isAbsolute() || s.matches(".*[,:\\\\\\s].*")) {
            throw new IllegalArgumentException("overlay paths must be absolute without ',', ':', '\\' or spaces: " + s);
        }
    }
}
