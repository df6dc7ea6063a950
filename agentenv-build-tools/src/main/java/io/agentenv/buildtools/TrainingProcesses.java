package io.agentenv.buildtools;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the AOT trainings share about the JVMs they record: the java binary, start-up ports, stopping, logs. */
final class TrainingProcesses {
    private TrainingProcesses() {}

    /** The java of the JVM running the training (Maven's, the project's JDK). */
    static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The port {@code process} logged ({@code pattern}'s first group), waited for up to 60 s. */
    static int loggedPort(Process process, Path log, String pattern) throws Exception {
        Pattern listening = Pattern.compile(pattern);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            if (Files.isRegularFile(log)) {
                Matcher m = listening.matcher(Files.readString(log, UTF_8));
                if (m.find()) {
                    return Integer.parseInt(m.group(1));
                }
            }
            if (!process.isAlive()) {
                throw new IOException("the process exited at start-up: " + tail(log));
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("the process did not listen within 60 s: " + tail(log));
            }
            Thread.sleep(50); // start-up poll, not a test
        }
    }

    /** SIGTERM; the JVM writes its AOT cache on its way out (it assembles it in a child JVM: seconds). */
    static void stop(Process process, String what, Path log, Duration wait) throws Exception {
        process.destroy();
        if (!process.waitFor(wait.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new IOException("the " + what + " did not exit within " + wait.toSeconds() + " s: " + tail(log));
        }
        if (process.exitValue() != 143 && process.exitValue() != 0) {
            throw new IOException("the " + what + " exited with " + process.exitValue() + ": " + tail(log));
        }
    }

    /** The last 20 lines of {@code log}. */
    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
