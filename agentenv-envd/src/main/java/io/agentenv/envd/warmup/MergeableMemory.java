package io.agentenv.envd.warmup;

import io.agentenv.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Offers envd's own memory to the kernel's samepage merging (KSM): {@code madvise(MADV_MERGEABLE)} on every private
 * mapping of this process. Called once, by a template's boot envd just before its checkpoint: CRIU records the flag
 * with each mapping and sets it again in every restore, so the sandboxes restored from one checkpoint (whose envd
 * memory starts byte-identical) can share those pages once the host's {@code ksmd} has scanned them, until one of
 * them writes a page. Only envd's mappings carry the flag: the processes it starts get a new address space at
 * {@code exec}, so a sandbox's own programs are never merged.
 */
final class MergeableMemory {
    /** {@code MADV_MERGEABLE} from linux/mman.h. */
    static final int MADV_MERGEABLE = 12;

    private static final MethodHandle MADVISE = Libc.function(
            "madvise",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));

    /** A mapping of {@code /proc/self/maps}: {@code [start, end)}. */
    record Region(long start, long end) {
        long bytes() {
            return end - start;
        }
    }

    /** What {@link #adviseAll} did: regions and bytes marked, regions the kernel refused and the last errno. */
    record Outcome(int regions, long bytes, int refused, int lastErrno) {}

    private MergeableMemory() {}

    /**
     * The private mappings of a {@code /proc/<pid>/maps} text, without the kernel's own ({@code [vdso]},
     * {@code [vvar]}, {@code [vsyscall]}...), which madvise refuses or which are not this process's memory.
     */
    static List<Region> privateRegions(List<String> mapsLines) {
        List<Region> regions = new ArrayList<>();
        for (String line : mapsLines) {
            String[] fields = line.trim().split("\\s+", 6);
            if (fields.length < 5 || fields[1].length() != 4 || fields[1].charAt(3) != 'p') {
                continue;
            }
            String name = fields.length == 6 ? fields[5] : "";
            if (name.startsWith("[v")) {
                continue;
            }
            int dash = fields[0].indexOf('-');
            if (dash <= 0) {
                continue;
            }
            long start = Long.parseUnsignedLong(fields[0], 0, dash, 16);
            long end = Long.parseUnsignedLong(fields[0], dash + 1, fields[0].length(), 16);
            if (Long.compareUnsigned(end, start) > 0) {
                regions.add(new Region(start, end));
            }
        }
        return regions;
    }

    /** Marks every private mapping of this process mergeable; a kernel without KSM refuses each (EINVAL). */
    static Outcome adviseAll() throws IOException {
        List<Region> regions = privateRegions(Files.readAllLines(Path.of("/proc/self/maps")));
        int marked = 0;
        long bytes = 0;
        int refused = 0;
        int lastErrno = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            for (Region region : regions) {
                int rc = (int) MADVISE.invokeExact(
                        state, MemorySegment.ofAddress(region.start()), region.bytes(), MADV_MERGEABLE);
                if (rc == 0) {
                    marked++;
                    bytes += region.bytes();
                } else {
                    refused++;
                    lastErrno = Libc.errno(state);
                }
            }
        } catch (Throwable e) {
            throw new IllegalStateException("madvise failed to run", e);
        }
        return new Outcome(marked, bytes, refused, lastErrno);
    }
}
