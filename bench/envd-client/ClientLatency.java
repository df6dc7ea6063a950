// Latency of the host's envd client (agentenv-envd-client) against the real envd jar: GET /health and GET /metrics
// over the unix socket and over TCP, with one keep-alive client (the production setup: one client per runtime
// generation) and with a new client per call (a new connection each time, for comparison); plus the time from
// starting envd to waitUntilHealthy returning. Run through run.sh, which builds the classpath and starts nothing else.
//
//   bench/envd-client/run.sh [calls]
import io.agentenv.envd.client.EnvdAddress;
import io.agentenv.envd.client.EnvdClientSettings;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.SandboxId;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

public class ClientLatency {
    interface Call {
        void run(EnvdApi envd) throws EnvdException;
    }

    public static void main(String[] args) throws Exception {
        Path envdDir = Path.of(args[0]).toAbsolutePath();
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        Path dir = Files.createTempDirectory("envd-client-bench");
        Path socket = dir.resolve("envd.sock");
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + envdDir.resolve("jvm.options")));
        if (Files.exists(envdDir.resolve("envd.aot"))) {
            command.add("-XX:AOTCache=" + envdDir.resolve("envd.aot"));
        }
        command.addAll(List.of("-jar", envdDir.resolve("agentenv-envd.jar").toString(), "--host", "127.0.0.1",
                "--port", String.valueOf(port), "--unix-socket", socket.toString()));
        SandboxId id = new SandboxId("benchbenchbenchbench");
        try (EnvdClients clients = new EnvdClients(EnvdClientSettings.DEFAULTS, Clock.systemUTC())) {
            long launched = System.nanoTime();
            Process envd = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("envd.log").toFile()).start();
            try {
                try (EnvdClient first = clients.open(id, new EnvdAddress.Unix(socket), Optional.empty())) {
                    first.waitUntilHealthy(Instant.now().plusSeconds(60));
                }
                System.out.printf(Locale.ROOT, "envd start to healthy (waitUntilHealthy over the unix socket): %.0f ms%n%n",
                        (System.nanoTime() - launched) / 1e6);
                System.out.println("| transport | connection | call | n | p50 µs | p95 µs | p99 µs | max µs |");
                System.out.println("|---|---|---|---|---|---|---|---|");
                for (EnvdAddress address : List.of(new EnvdAddress.Unix(socket), new EnvdAddress.Tcp("127.0.0.1", port))) {
                    String transport = address instanceof EnvdAddress.Unix ? "unix socket" : "TCP loopback";
                    try (EnvdClient client = clients.open(id, address, Optional.empty())) {
                        run(transport, "keep-alive", "health", calls, () -> client, EnvdApi::health);
                        run(transport, "keep-alive", "metrics", calls, () -> client, EnvdApi::metrics);
                    }
                    run(transport, "new client per call", "health", Math.min(calls, 500),
                            () -> clients.open(id, address, Optional.empty()), EnvdApi::health);
                }
            } finally {
                envd.destroy();
                if (!envd.waitFor(10, TimeUnit.SECONDS)) {
                    envd.destroyForcibly();
                }
                try (var files = Files.walk(dir)) {
                    files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    interface Opener {
        EnvdClient open();
    }

    private static void run(String transport, String connection, String name, int calls, Opener opener, Call call)
            throws Exception {
        boolean fresh = connection.startsWith("new");
        EnvdClient shared = fresh ? null : opener.open();
        for (int i = 0; i < Math.min(200, calls); i++) { // warm-up
            once(fresh ? null : shared, opener, call);
        }
        long[] micros = new long[calls];
        for (int i = 0; i < calls; i++) {
            long started = System.nanoTime();
            once(fresh ? null : shared, opener, call);
            micros[i] = (System.nanoTime() - started) / 1000;
        }
        Arrays.sort(micros);
        System.out.printf(Locale.ROOT, "| %s | %s | %s | %d | %d | %d | %d | %d |%n", transport, connection, name, calls,
                micros[calls / 2], micros[(int) (calls * 0.95)], micros[(int) (calls * 0.99)], micros[calls - 1]);
    }

    private static void once(EnvdClient shared, Opener opener, Call call) throws Exception {
        if (shared != null) {
            call.run(shared);
            return;
        }
        try (EnvdClient client = opener.open()) {
            call.run(client);
        }
    }
}
