package io.agentenv.volumes.storage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a host tool (mount, umount, mkfs.ext4) with a deadline; a non-zero exit is an IOException with its output. */
final class HostCommands {
    private static final long TIMEOUT_SECONDS = 120;

    private HostCommands() {}

    static String run(List<String> command) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            process.getOutputStream().close();
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(command.getFirst() + " did not finish in " + TIMEOUT_SECONDS + " s");
            }
            String text = new String(output, StandardCharsets.UTF_8).strip();
            if (process.exitValue() != 0) {
                throw new IOException(String.join(" ", command) + " failed (exit " + process.exitValue() + "): "
                        + (text.length() > 500 ? text.substring(0, 500) : text));
            }
            return text;
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(command.getFirst() + " interrupted", e);
        }
    }
}
