package io.agentenv.images;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a command of a test's own set-up (building and pushing images) and fails the test if it fails. */
final class Cmd {

    private Cmd() {}

    static String run(String... argv) throws IOException, InterruptedException {
        return run(List.of(argv), "");
    }

    /** Runs {@code argv} with {@code stdin} as its input; returns stdout. */
    static String run(List<String> argv, String stdin) throws IOException, InterruptedException {
        Path err = Files.createTempFile("cmd-", ".err");
        try {
            Process process =
                    new ProcessBuilder(argv).redirectError(err.toFile()).start();
            try (OutputStream in = process.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            byte[] out = process.getInputStream().readAllBytes();
            if (!process.waitFor(120, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
                fail("timed out: %s", argv);
            }
            if (process.exitValue() != 0) {
                fail("%s exited with %d: %s", argv, process.exitValue(), Files.readString(err));
            }
            return new String(out, StandardCharsets.UTF_8);
        } finally {
            Files.deleteIfExists(err);
        }
    }
}
