package io.agentenv.images;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Debian's {@code docker-registry} (the reference registry, distribution 2.8) on 127.0.0.1 and a free port, its
 * storage in a given directory, with an optional {@code auth:} section. Started by the constructor, stopped by
 * {@link #close()}.
 */
final class LocalRegistry implements AutoCloseable {

    private final Process process;
    private final int port;
    private final Path log;

    LocalRegistry(Path dir, Path storage, String authYaml) throws IOException, InterruptedException {
        port = freePort();
        Path config = dir.resolve("registry-" + port + ".yml");
        log = dir.resolve("registry-" + port + ".log");
        Files.writeString(config, """
                version: 0.1
                log:
                  level: info
                storage:
                  filesystem:
                    rootdirectory: %s
                  delete:
                    enabled: true
                http:
                  addr: 127.0.0.1:%d
                %s""".formatted(storage, port, authYaml));
        process = new ProcessBuilder(List.of("docker-registry", "serve", config.toString()))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        process.getOutputStream().close();
        awaitListening();
    }

    /** {@code 127.0.0.1:<port>}, as references name it. */
    String host() {
        return "127.0.0.1:" + port;
    }

    private void awaitListening() throws IOException, InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
        while (true) {
            if (!process.isAlive()) {
                fail("docker-registry exited with %d: %s", process.exitValue(), Files.readString(log));
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                if (Instant.now().isAfter(deadline)) {
                    close();
                    fail("docker-registry did not listen on %d within 30 s: %s", port, Files.readString(log));
                }
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            return socket.getLocalPort();
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor();
        }
    }
}
