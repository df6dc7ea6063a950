package io.agentenv.images;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/** {@link ToolRunner} on {@link ProcessBuilder}: argv as a list, stdout and stderr drained on virtual threads. */
final class ProcessToolRunner implements ToolRunner {

    /** stdout collected for JSON (manifests, configs) is small; anything larger is not what was asked for. */
    private static final int MAX_STDOUT = 16 << 20;

    /** The end of stderr is where tools say why they failed. */
    private static final int MAX_STDERR = 64 << 10;

    @Override
    public Result run(List<String> argv, Map<String, String> env, Duration timeout, Consumer<String> progress)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(argv);
        builder.environment().putAll(env);
        Process process = builder.start();
        process.getOutputStream().close();
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        Thread out = Thread.ofVirtual()
                .start(() -> drain(process.getInputStream(), progress == null ? stdout : null, progress, MAX_STDOUT));
        Thread err = Thread.ofVirtual().start(() -> drain(process.getErrorStream(), stderr, null, MAX_STDERR));
        boolean finished;
        try {
            finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            kill(process);
            throw e;
        }
        if (!finished) {
            kill(process);
        }
        out.join();
        err.join();
        String errText;
        synchronized (stderr) {
            errText = stderr.toString(StandardCharsets.UTF_8);
        }
        byte[] outBytes;
        synchronized (stdout) {
            outBytes = stdout.toByteArray();
        }
        return new Result(finished ? process.exitValue() : -1, outBytes, errText, !finished);
    }

    private static void kill(Process process) throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor();
    }

    /** Reads a stream to its end: into {@code sink} (keeping at most {@code limit} bytes) or line by line. */
    private static void drain(InputStream in, ByteArrayOutputStream sink, Consumer<String> lines, int limit) {
        try (in) {
            if (lines != null) {
                BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
                String line;
                while ((line = reader.readLine()) != null) {
                    if (!line.isBlank()) {
                        try {
                            lines.accept(line.strip());
                        } catch (RuntimeException e) {
                            // a failing progress consumer must not stall the tool: keep draining
                        }
                    }
                }
                return;
            }
            byte[] buffer = new byte[8192];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                synchronized (sink) {
                    if (limit == MAX_STDERR && sink.size() + n > limit) {
                        byte[] kept = sink.toByteArray();
                        sink.reset();
                        int keep = Math.max(0, limit / 2 - n);
                        sink.write(kept, kept.length - Math.min(keep, kept.length), Math.min(keep, kept.length));
                    }
                    if (sink.size() + n <= limit) {
                        sink.write(buffer, 0, n);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
