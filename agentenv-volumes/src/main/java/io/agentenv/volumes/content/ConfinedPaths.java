package io.agentenv.volumes.content;

import static java.util.Objects.requireNonNull;

import io.agentenv.volumes.VolumeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;

/**
 * Turns a {@link VolumePath} into a host path below the volume's root, component by component and without following a
 * symbolic link: every parent must be a real directory (a symlinked parent, absolute or relative, is refused), and the
 * last component is never followed by the operations (they act on a link itself, or refuse it). {@code ..} never gets
 * here ({@link VolumePath#parse}).
 *
 * <p>Checks and use are separate system calls: a process that could swap a checked directory for a symlink between
 * the two could still redirect one operation. Only the server writes to a volume while no sandbox mounts it; once
 * sandboxes do, the operations move to descriptor-relative calls (openat with O_NOFOLLOW).
 */
final class ConfinedPaths {
    private final Path root;

    ConfinedPaths(Path root) {
        this.root = requireNonNull(root, "root is null").toAbsolutePath().normalize();
    }

    Path root() {
        return root;
    }

    /** The host path of {@code path}, its parents checked; the entry itself may not exist. */
    Path locate(VolumePath path) throws IOException {
        Path current = root;
        var parts = path.components();
        for (int i = 0; i < parts.size() - 1; i++) {
            current = current.resolve(parts.get(i));
            BasicFileAttributes attrs =
                    attributes(current).orElseThrow(() -> VolumeException.notFound("path " + path + " not found"));
            if (attrs.isSymbolicLink()) {
                throw VolumeException.invalid(
                        "path " + path + " goes through a symbolic link; links are not followed in a volume");
            }
            if (!attrs.isDirectory()) {
                throw VolumeException.invalid("path " + path + " goes through a file that is not a directory");
            }
        }
        return parts.isEmpty() ? root : current.resolve(parts.getLast());
    }

    /** The entry's own attributes (a link's, not its target's), or empty when it does not exist. */
    static Optional<BasicFileAttributes> attributes(Path host) throws IOException {
        try {
            return Optional.of(Files.readAttributes(host, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /** The path of {@code host} (below the root) as the client names it. */
    String clientPath(Path host) {
        Path relative = root.relativize(host);
        return relative.toString().isEmpty() ? "/" : "/" + relative;
    }
}
