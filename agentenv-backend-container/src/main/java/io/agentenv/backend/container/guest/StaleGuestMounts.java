package io.agentenv.backend.container.guest;

import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.MountNamespaces;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest-mount sources {@link GuestMounts#prepare} replaced and moved aside ({@code .dev-stale-<uuid>},
 * {@code .cgroup-stale-<uuid>}), kept while running sandboxes bind them as their /dev or /sys/fs/cgroup. The start-up
 * reconciler ({@code LeftoverReaper}) removes them once nothing on the host binds them.
 */
public final class StaleGuestMounts {

    private static final Logger log = LoggerFactory.getLogger(StaleGuestMounts.class);

    private StaleGuestMounts() {}

    /**
     * Removes the directories moved aside in {@code dir} (a {@link GuestMounts#dir}) that no sandbox on this host binds
     * any more: none of its mounts, in any mount namespace, has one as its source, and nothing is mounted below one
     * ({@link MountNamespaces}). A sandbox started after the move binds the new directory (by its path), so one that
     * is unused stays unused. Directories a {@link GuestMounts#prepare} is building at the moment ({@code .dev-<uuid>})
     * are left alone. Backends starting at the same time may remove the same directories together.
     *
     * @return the directories removed
     */
    public static List<Path> removeUnbound(Path dir) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        List<Path> stale;
        try (Stream<Path> entries = Files.list(dir)) {
            stale = entries.filter(entry -> GuestMounts.MOVED_ASIDE
                                    .matcher(entry.getFileName().toString())
                                    .matches()
                            && Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS))
                    .sorted()
                    .toList();
        }
        if (stale.isEmpty()) {
            return List.of();
        }
        Set<Path> inUse = MountNamespaces.inUse(stale);
        List<Path> removed = new ArrayList<>();
        for (Path old : stale) {
            if (inUse.contains(old)) {
                log.atInfo().addKeyValue("dir", old).log("replaced guest mount source kept: a sandbox still binds it");
            } else {
                removeRacing(old);
                removed.add(old);
            }
        }
        return List.copyOf(removed);
    }

    /** Deletes {@code dir}, which another backend's start may be deleting at the same time. */
    private static void removeRacing(Path dir) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                FileTrees.deleteTree(dir); // returns once it is gone
                return;
            } catch (NoSuchFileException removedMeanwhile) {
                if (attempt == 100) { // each attempt finds less left, so this is not a race any more
                    throw removedMeanwhile;
                }
            }
        }
    }
}
