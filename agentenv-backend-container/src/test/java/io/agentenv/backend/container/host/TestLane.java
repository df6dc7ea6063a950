package io.agentenv.backend.container.host;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One of 36 lanes that host tests running at the same time (several Maven runs on one host) claim exclusively with a
 * file lock. A lane owns a netns/veth name prefix, a range of network slots, a container-id prefix and a temp-dir
 * prefix; whatever carries them and exists when the lane is claimed was left by a dead run and may be removed.
 */
public final class TestLane implements AutoCloseable {

    private static final Path LOCKS = Path.of("/run/agentenv/test-lanes");
    private static final int LANES = 36;
    public static final int SLOTS_PER_LANE = 64;
    /** Test sandboxes' cgroups live apart from a server's, so its start-up reaper never touches them. */
    public static final String CGROUP_PARENT = "agentenv-tests";

    private final int lane;
    private final FileChannel channel;
    private final FileLock lock;

    private TestLane(int lane, FileChannel channel, FileLock lock) {
        this.lane = lane;
        this.channel = channel;
        this.lock = lock;
    }

    public static TestLane claim() throws IOException {
        Files.createDirectories(LOCKS);
        for (int lane = 0; lane < LANES; lane++) {
            FileChannel channel = FileChannel.open(
                    LOCKS.resolve(lane + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = null;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException heldByThisJvm) {
                // another fixture of this test run holds it
            }
            if (lock != null) {
                return new TestLane(lane, channel, lock);
            }
            channel.close();
        }
        throw new IOException("all " + LANES + " host-test lanes are taken");
    }

    public int number() {
        return lane;
    }

    private char letter() {
        return Character.forDigit(lane, LANES);
    }

    /** Netns and veth names: "aenvt" plus the lane's letter (inside the host firewall's "aenv*" match). */
    public String namePrefix() {
        return "aenvt" + letter();
    }

    /** This lane's run dir (its runc state root is below it), apart from a server's /run/agentenv/runc. */
    public Path runDir() {
        return LOCKS.resolve(String.valueOf(letter()));
    }

    /** Container ids and cgroups of this lane start with this. */
    public String idPrefix() {
        return "t" + letter() + "-";
    }

    /** Temp dirs of this lane start with this. */
    public String dirPrefix() {
        return "aenv-it-" + letter() + "-";
    }

    /** Slots at the top of the sandbox range, away from a server's (which start at 0). */
    public int firstSlot(SlotAddressing addressing) {
        return addressing.slotCount() - SLOTS_PER_LANE * (lane + 1);
    }

    @Override
    public void close() throws IOException {
        try (channel) {
            lock.release();
        }
    }
}
