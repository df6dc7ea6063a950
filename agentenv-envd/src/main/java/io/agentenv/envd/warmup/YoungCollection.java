package io.agentenv.envd.warmup;

import java.lang.ref.WeakReference;
import java.time.Duration;

/**
 * Leaves the young generation (nearly) empty: allocates short-lived arrays until the next young collection has run,
 * seen as a weakly held object of its own being cleared. Ending the template's warm-up with this puts a checkpoint
 * with an empty eden on disk, so that a restored sandbox's first young collection (~2 ms of the VM thread with envd's
 * {@code -Xmn2m}) comes after ~2 MB of its own allocation, not within its first three commands. A young collection
 * does not arm the compiled methods' entry barriers as the warm-up's full GC does.
 */
final class YoungCollection {
    private static final int CHUNK = 1024;
    /** Where the allocations go, so that no compiler can leave them out. */
    @SuppressWarnings("UnusedVariable") // written only, on purpose
    private static volatile Object sink;

    private YoungCollection() {}

    /**
     * Allocates until a young collection has run, at most {@code maxBytes} or until {@code limit}; true when one ran.
     */
    static boolean runNext(long maxBytes, Duration limit) {
        WeakReference<Object> marker = new WeakReference<>(new Object());
        long deadline = System.nanoTime() + limit.toNanos();
        for (long allocated = 0; allocated < maxBytes && System.nanoTime() < deadline; allocated += CHUNK) {
            if (marker.refersTo(null)) {
                sink = null;
                return true;
            }
            sink = new byte[CHUNK];
        }
        sink = null;
        return marker.refersTo(null);
    }
}
