package io.agentenv.envd.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.warmup.MergeableMemory.Region;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class MergeableMemoryTest {

    @Test
    void privateMappingsAreOfferedTheKernelsOwnAndSharedOnesNot() {
        List<String> maps = List.of(
                "fd000000-fd9ae000 rw-p 00000000 00:00 0 ",
                "800001000-800972000 rw-p 00001000 00:2a 123                          /opt/agentenv-envd/envd.aot",
                "7f6a96c00000-7f6a97130000 rwxp 00000000 00:00 0 ",
                "7f6a99480000-7f6a9956b000 r--p 00000000 00:2a 77   /usr/lib/jvm/x/lib/server/libjvm.so",
                "7f6a9a000000-7f6a9a001000 rw-s 00000000 00:05 99   /dev/shm/shared",
                "555569ed7000-55556a636000 rw-p 00000000 00:00 0                          [heap]",
                "7ffd8e5c1000-7ffd8e5e2000 rw-p 00000000 00:00 0                          [stack]",
                "7ffd8e5f0000-7ffd8e5f4000 r--p 00000000 00:00 0                          [vvar]",
                "7ffd8e5f4000-7ffd8e5f6000 r-xp 00000000 00:00 0                          [vdso]",
                "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
                "garbage");

        assertThat(MergeableMemory.privateRegions(maps))
                .containsExactly(
                        new Region(0xfd000000L, 0xfd9ae000L),
                        new Region(0x800001000L, 0x800972000L),
                        new Region(0x7f6a96c00000L, 0x7f6a97130000L),
                        new Region(0x7f6a99480000L, 0x7f6a9956b000L),
                        new Region(0x555569ed7000L, 0x55556a636000L),
                        new Region(0x7ffd8e5c1000L, 0x7ffd8e5e2000L));
    }

    @Test
    void aMappingOfThisProcessIsMarkedMergeable() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment block = arena.allocate(4 << 20); // malloc maps a block this large by itself
            MergeableMemory.Outcome outcome = MergeableMemory.adviseAll();
            if (!Files.exists(Path.of("/sys/kernel/mm/ksm/run"))) { // a kernel without KSM refuses every madvise
                assertThat(outcome.regions()).isZero();
                assertThat(outcome.refused()).isPositive();
                return;
            }
            assertThat(outcome.refused()).isZero();
            // the kernel shows a mergeable mapping with "mg" in its VmFlags
            assertThat(vmFlagsAt(block.address())).contains("mg");
        }
    }

    /** The VmFlags of the mapping of this process that holds {@code address}. */
    private static List<String> vmFlagsAt(long address) throws Exception {
        boolean inside = false;
        for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            List<Region> header = MergeableMemory.privateRegions(List.of(line));
            if (!header.isEmpty()) {
                inside = Long.compareUnsigned(header.getFirst().start(), address) <= 0
                        && Long.compareUnsigned(address, header.getFirst().end()) < 0;
            } else if (inside && line.startsWith("VmFlags:")) {
                return List.of(line.substring("VmFlags:".length()).trim().split("\\s+"));
            }
        }
        throw new AssertionError("no private mapping holds 0x" + Long.toHexString(address));
    }
}
