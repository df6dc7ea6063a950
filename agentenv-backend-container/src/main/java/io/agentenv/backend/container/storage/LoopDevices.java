package io.agentenv.backend.container.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The host's attached loop devices, from {@code /sys/block/loopN/loop/backing_file} (no {@code losetup} process). A
 * sandbox's disk is a loop-mounted image in its sandbox dir; a loop device still backed by a file there after the
 * sandbox is gone is a leak (the kernel keeps the path it was attached with, " (deleted)" appended once removed).
 */
public final class LoopDevices {

    private static final Path SYS_BLOCK = Path.of("/sys/block");

    /** One attached loop device: its name ({@code loop3}) and its backing file as the kernel prints it. */
    public record Attached(String device, String backingFile) {

        public Attached {
            requireLoopName(device);
        }

        /** The backing file's path, without the " (deleted)" the kernel appends once it is removed. */
        public Path backingPath() {
            String deleted = " (deleted)";
            return Path.of(
                    backingFile.endsWith(deleted)
                            ? backingFile.substring(0, backingFile.length() - deleted.length())
                            : backingFile);
        }

        @Override
        public String toString() {
            return device + " -> " + backingFile;
        }
    }

    private LoopDevices() {}

    /** {@code device} if it names a loop device ({@code loop3}), else an IllegalArgumentException. */
    static String requireLoopName(String device) {
        if (!device.matches("loop[0-9]+")) {
            throw new IllegalArgumentException("not a loop device name: " + device);
        }
        return device;
    }

    /**
     * What {@code device} ({@code loop3}) is bound to now, as the kernel prints it; empty when it is detached. A device
     * detached while this reads (another sandbox's disk released at that moment) reads as detached: sysfs fails the
     * read of an attribute removed after its open (ENODEV), and the attribute is gone afterwards.
     */
    static Optional<String> backingFileOf(String device) throws IOException {
        Path file = SYS_BLOCK.resolve(requireLoopName(device)).resolve("loop/backing_file");
        for (int attempt = 1; ; attempt++) {
            try {
                return Optional.of(Files.readString(file).strip());
            } catch (NoSuchFileException detached) {
                return Optional.empty();
            } catch (IOException e) {
                if (!Files.exists(file)) {
                    return Optional.empty();
                }
                if (attempt == 2) { // failed again with the attribute there: not that race
                    throw e;
                }
            }
        }
    }

    /** Loop devices whose backing file is at or below {@code dir}. */
    public static List<Attached> backedUnder(Path dir) throws IOException {
        String root = dir.toAbsolutePath().normalize().toString();
        List<Attached> found = new ArrayList<>();
        try (Stream<Path> devices = Files.list(SYS_BLOCK)) {
            List<String> names = devices.map(d -> d.getFileName().toString())
                    .filter(d -> d.matches("loop[0-9]+"))
                    .toList();
            for (String device : names) {
                // empty: not attached (or detached while listing)
                Optional<String> backing = backingFileOf(device);
                if (backing.isPresent()
                        && (backing.get().equals(root) || backing.get().startsWith(root + "/"))) {
                    found.add(new Attached(device, backing.get()));
                }
            }
        }
        return List.copyOf(found);
    }
}
