package io.agentenv.envd;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The workload recorded into the JDK AOT cache (JEP 483/514): the requests a sandbox sees first, over raw HTTP/1.1
 * ({@link LoopbackHttp}) so no client library ends up in the cache.
 */
final class AotTraining {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> CLOSE = List.of("Connection: close");
    private static final List<String> RPC = List.of("Connection: close", "Connect-Protocol-Version: 1",
            "Content-Type: application/json");
    private static final List<String> STREAM = List.of("Connection: close", "Connect-Protocol-Version: 1",
            "Content-Type: application/connect+json");

    private AotTraining() {}

    static void exercise(int port, Optional<Path> unixSocket) throws IOException {
        request(port, "GET", "/health", CLOSE, null);
        request(port, "GET", "/ready", CLOSE, null);
        request(port, "POST", "/init", RPC, "{\"envVars\":{\"A\":\"1\"}}".getBytes(StandardCharsets.UTF_8));
        request(port, "GET", "/envs", CLOSE, null);
        request(port, "POST", "/process.Process/List", RPC, "{}".getBytes(StandardCharsets.UTF_8));
        request(port, "POST", "/process.Process/Start", STREAM,
                LoopbackHttp.envelope("{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo aot\"]},\"stdin\":false}"));
        request(port, "POST", "/process.Process/Start", STREAM,
                LoopbackHttp.envelope("{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo aot\"]},\"stdin\":true}"));
        request(port, "POST", "/process.Process/SendSignal", RPC,
                "{\"process\":{\"pid\":1},\"signal\":\"SIGNAL_SIGKILL\"}".getBytes(StandardCharsets.UTF_8));
        request(port, "GET", "/logs?limit=10", CLOSE, null);
        // the host samples every sandbox's metrics every few seconds: with its classes and profile in the cache, an idle
        // envd does not spend its first hours loading and compiling this path one sample at a time
        request(port, "GET", "/metrics", CLOSE, null);
        request(port, "GET", "/metrics", CLOSE, null);
        request(port, "GET", "/nope", CLOSE, null);
        request(port, "GET", "/ready", CLOSE, null);
        if (unixSocket.isPresent()) { // the host's way in: the relay's classes come from the cache too
            try (LoopbackHttp http = LoopbackHttp.unix(unixSocket.get(), TIMEOUT)) {
                http.send("GET", "/health", CLOSE, null);
            }
        }
    }

    private static void request(int port, String method, String path, List<String> headers, byte[] body) throws IOException {
        try (LoopbackHttp http = LoopbackHttp.tcp(port, TIMEOUT)) {
            http.send(method, path, headers, body);
        }
    }
}
