package io.agentenv.envd.warmup;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** envd's stderr when it is a file it appends to (the container's envd log): its size, and cutting it back to one. */
final class StderrFile {
    private static final Logger log = LoggerFactory.getLogger(StderrFile.class);
    private static final long O_APPEND = 02000;
    private static final Path STDERR = Path.of("/proc/self/fd/2");

    private StderrFile() {}

    /**
     * envd's stderr size when it is a regular file opened for appending (the container's envd log, {@code >>}), to cut
     * the warm-up's lines off again; empty otherwise (a pipe, or a file written at an offset, which a cut would leave a
     * hole in).
     */
    static OptionalLong appendedSize() {
        System.err.flush();
        try {
            if (!Files.isRegularFile(STDERR)) {
                return OptionalLong.empty();
            }
            for (String line : Files.readAllLines(Path.of("/proc/self/fdinfo/2"))) {
                if (line.startsWith("flags:")
                        && (Long.parseLong(line.substring(6).strip(), 8) & O_APPEND) != 0) {
                    return OptionalLong.of(Files.size(STDERR));
                }
            }
            return OptionalLong.empty();
        } catch (IOException | NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    static void cutTo(long size) {
        System.err.flush();
        try (FileChannel file = FileChannel.open(STDERR, StandardOpenOption.WRITE)) { // the same file, opened anew
            if (file.size() > size) {
                file.truncate(size);
            }
        } catch (IOException e) {
            log.atWarn()
                    .addKeyValue("error", e.toString())
                    .log("request warm-up: could not cut its lines from envd's log");
        }
    }
}
