package io.agentenv.backend.container.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The host ids a sandbox's user namespace maps its ids 0 to {@code size - 1} onto: root inside is {@code hostStart}
 * outside, an unprivileged id, and so is every other id.
 */
public record GuestIds(int hostStart, int size) {
    public GuestIds {
        if (hostStart < 1 || size < 1 || (long) hostStart + size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("bad id range: " + hostStart + "+" + size);
        }
    }

    /** The host id of {@code guestId}. */
    public int host(int guestId) {
        if (guestId < 0 || guestId >= size) {
            throw new IllegalArgumentException("id " + guestId + " is not mapped");
        }
        return hostStart + guestId;
    }

    /**
     * Writes this mapping as the uid and gid map of the user namespace that process {@code pid} made (and has not
     * mapped yet): a namespace of the guests' ids, without runc.
     */
    public void mapNamespaceOf(long pid) throws IOException {
        String mapping = "0 " + hostStart + " " + size + "\n";
        Path process = Path.of("/proc", Long.toString(pid));
        Files.writeString(process.resolve("uid_map"), mapping);
        Files.writeString(process.resolve("gid_map"), mapping);
    }
}
