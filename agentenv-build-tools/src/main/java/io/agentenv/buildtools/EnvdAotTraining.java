package io.agentenv.buildtools;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Records envd's JDK AOT cache (JEP 483/514, {@code target/envd.aot}): starts the packaged envd exactly as a sandbox
 * runs it ({@code java @jvm.options -jar agentenv-envd.jar}, its own {@code Main}, nothing else on the class path) with
 * {@code -XX:AOTCacheOutput}, sends it the requests a sandbox sees first over loopback TCP and its unix socket (the
 * host's way in, relayed to the TCP listener), then stops it with SIGTERM; the JVM writes the cache as it exits.
 * Classes and linking only, no method profiles ({@code -XX:-AOTRecordTraining}): profiles made C1 compile the trained
 * methods during start-up (~15 ms more CPU before the first answer) and the first Start was no faster.
 *
 * <p>The requests come from this JVM, not from inside envd: the recorded class path is the one every sandbox runs,
 * and no client code ends up in the cache. Run by {@code mvn package} in agentenv-envd ({@code exec:java}, this module
 * a plugin dependency only): <pre>EnvdAotTraining &lt;envd target dir&gt;</pre> A failure fails the build: the
 * container backend needs the cache next to the jar.
 */
public final class EnvdAotTraining {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> CLOSE = List.of();
    private static final List<String> RPC = List.of("Connect-Protocol-Version: 1", "Content-Type: application/json");
    private static final List<String> STREAM =
            List.of("Connect-Protocol-Version: 1", "Content-Type: application/connect+json");

    private EnvdAotTraining() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) { // runs inside Maven's JVM (exec:java): no System.exit
            throw new IllegalArgumentException("usage: EnvdAotTraining <envd target dir>");
        }
        Path target = Path.of(args[0]).toAbsolutePath();
        Path cache = target.resolve("envd.aot");
        Path log = target.resolve("aot-training.log");
        Path socket = target.resolve("aot-training.sock");
        Files.deleteIfExists(cache);
        Files.deleteIfExists(socket);
        long started = System.nanoTime();
        Process envd = start(target, cache, socket, log);
        try {
            int port = TrainingProcesses.loggedPort(envd, log, "envd listening port=(\\d+)");
            exercise(port, socket);
            TrainingProcesses.stop(envd, "envd", log, Duration.ofSeconds(120));
            envd = null;
        } finally {
            if (envd != null) {
                envd.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            Files.deleteIfExists(socket);
        }
        if (!Files.isRegularFile(cache)) {
            throw new IOException("envd exited without writing " + cache + ": " + TrainingProcesses.tail(log));
        }
        Files.delete(log); // kept only when the recording failed: target/ is envd's distribution
        System.out.printf(
                "envd AOT cache recorded in %d ms: %s (%d bytes)%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), cache, Files.size(cache));
    }

    /**
     * envd on a loopback port it picks itself (logged at INFO, as a sandbox's envd logs) and a unix socket; the JVM
     * options are the ones a sandbox's envd runs with, which the cache requires.
     */
    private static Process start(Path target, Path cache, Path socket, Path log) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                TrainingProcesses.java(),
                "@" + target.resolve("jvm.options"),
                "-XX:-AOTRecordTraining",
                "-XX:AOTCacheOutput=" + cache,
                "-Xlog:aot=error,cds=error",
                "-jar",
                target.resolve("agentenv-envd.jar").toString(),
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--unix-socket",
                socket.toString(),
                "--log-level",
                "INFO"));
        return new ProcessBuilder(command)
                .directory(target.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }

    /** The requests a new sandbox sees first, each on a connection of its own. */
    private static void exercise(int port, Path socket) throws Exception {
        tcp(port, "GET", "/health", CLOSE, null);
        tcp(port, "GET", "/ready", CLOSE, null);
        tcp(port, "POST", "/init", RPC, "{\"envVars\":{\"A\":\"1\"}}".getBytes(UTF_8));
        tcp(port, "GET", "/envs", CLOSE, null);
        tcp(port, "POST", "/process.Process/List", RPC, "{}".getBytes(UTF_8));
        tcp(
                port,
                "POST",
                "/process.Process/Start",
                STREAM,
                envelope("{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo aot\"]},\"stdin\":false}"));
        tcp(
                port,
                "POST",
                "/process.Process/Start",
                STREAM,
                envelope("{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo aot\"]},\"stdin\":true}"));
        // a signal to a process envd did not start: the RPC's error path (envd answers not found, signals nothing)
        tcp(
                port,
                "POST",
                "/process.Process/SendSignal",
                RPC,
                "{\"process\":{\"pid\":1},\"signal\":\"SIGNAL_SIGKILL\"}".getBytes(UTF_8));
        tcp(port, "GET", "/logs?limit=10", CLOSE, null);
        // the host samples every sandbox's metrics every few seconds: with its classes in the cache, an idle envd does
        // not spend its first hours loading this path one sample at a time
        tcp(port, "GET", "/metrics", CLOSE, null);
        tcp(port, "GET", "/metrics", CLOSE, null);
        tcp(port, "GET", "/nope", CLOSE, null);
        tcp(port, "GET", "/ready", CLOSE, null); // answers once envd's background set-ups are done
        // the host's way in: the relay's classes come from the cache too
        CompletableFuture.runAsync(() -> {
                    try (SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                        exchange(
                                Channels.newInputStream(channel),
                                Channels.newOutputStream(channel),
                                "GET",
                                "/health",
                                CLOSE,
                                null);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                })
                .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    private static void tcp(int port, String method, String path, List<String> headers, byte[] body)
            throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(Math.toIntExact(TIMEOUT.toMillis()));
            exchange(socket.getInputStream(), socket.getOutputStream(), method, path, headers, body);
        }
    }

    /** One HTTP/1.1 request with {@code Connection: close}; reads the answer to its end; returns its status. */
    static int exchange(InputStream in, OutputStream out, String method, String path, List<String> headers, byte[] body)
            throws IOException {
        StringBuilder head = new StringBuilder()
                .append(method)
                .append(' ')
                .append(path)
                .append(" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
        headers.forEach(h -> head.append(h).append("\r\n"));
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        out.write(head.append("\r\n").toString().getBytes(UTF_8));
        if (body != null) {
            out.write(body);
        }
        out.flush();
        ByteArrayOutputStream answer = new ByteArrayOutputStream();
        in.transferTo(answer);
        String text = answer.toString(UTF_8);
        if (!text.startsWith("HTTP/1.1 ") || text.length() < 12) {
            throw new IOException(method + " " + path + ": not an HTTP answer: " + text);
        }
        return Integer.parseInt(text.substring(9, 12));
    }

    /** A Connect streaming request body: one uncompressed envelope around {@code json}. */
    static byte[] envelope(String json) {
        byte[] payload = json.getBytes(UTF_8);
        return ByteBuffer.allocate(5 + payload.length)
                .put((byte) 0)
                .putInt(payload.length)
                .put(payload)
                .array();
    }
}
