package io.agentenv.envd.warmup;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The CPU this JVM's JIT compiler threads have used so far, from {@code /proc/self/task/<tid>/schedstat} (nanoseconds
 * on the CPU; HotSpot names them {@code C1 CompilerThre} and {@code C2 CompilerThre}). 0 where /proc does not say
 * (then nothing looks busy). A compiler thread that ends (HotSpot may retire idle ones) drops out of the sum, so the
 * sum may go down: callers only compare readings for change.
 */
final class CompilerThreads {
    private static final Path TASKS = Path.of("/proc/self/task");

    private List<Path> schedstats = List.of();

    /** The compiler threads' CPU in nanoseconds (looks for the threads again when one has gone). */
    long cpuNanos() {
        if (schedstats.isEmpty()) {
            schedstats = find();
        }
        long sum = 0;
        for (Path schedstat : schedstats) {
            try {
                String text = Files.readString(schedstat);
                int space = text.indexOf(' ');
                sum += Long.parseLong(space < 0 ? text.strip() : text.substring(0, space));
            } catch (IOException | NumberFormatException e) {
                schedstats = List.of();
                return sum;
            }
        }
        return sum;
    }

    private static List<Path> find() {
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                try {
                    String name = Files.readString(task.resolve("comm"));
                    if (name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler")) {
                        found.add(task.resolve("schedstat"));
                    }
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            return List.of();
        }
        return List.copyOf(found);
    }
}
