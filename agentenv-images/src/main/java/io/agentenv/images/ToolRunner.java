package io.agentenv.images;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/** Runs one external tool (skopeo, umoci) to its end; a seam so tests can see every command line. */
interface ToolRunner {

    /**
     * Runs {@code argv} (no shell) with {@code env} added to the inherited environment and stdin closed.
     *
     * @param progress when non-null, receives stdout line by line (and {@link Result#stdout()} is empty); when null,
     *     stdout is collected
     */
    Result run(List<String> argv, Map<String, String> env, Duration timeout, Consumer<String> progress)
            throws IOException, InterruptedException;

    /** How a tool ended; {@code timedOut} when it was killed at its deadline. */
    record Result(int exitCode, byte[] stdout, String stderr, boolean timedOut) {
        boolean ok() {
            return !timedOut && exitCode == 0;
        }
    }
}
