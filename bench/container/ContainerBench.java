// Latency and footprint of the container backend through the SPI (what the orchestrator calls), on this host:
// time to interactive (prepare + start, i.e. restore of the template's boot image and envd /init, then one `true`
// through envd's process API), sequential and as a 20-way burst; `true` on a running sandbox; pause to disk; resume;
// snapshot; fork x1 and x10 (prepare + start of children from one snapshot, concurrently); resident memory of an idle
// sandbox. Runs apart from a server's names and from other runs of this benchmark: run.sh claims one of 8 lanes with a
// lock held for the whole run and passes it as AENV_BENCH_LANE; lane L uses netns/veth prefix aenvbL, runc dir
// /run/agentenv/bench-L, container ids benchL-*, slots 9216+64L.. (64 of them). Removes everything it created (and what
// a dead run on the same lane left). Run through run.sh.
//
//   bench/container/run.sh [iterations] [warm pool size]
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendContext;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateId;

import java.io.DataInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public class ContainerBench {
    static final SecureRandom RANDOM = new SecureRandom();
    static final Duration READY = Duration.ofSeconds(120);
    static final TemplateId BASE = new TemplateId("base");
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    static SandboxBackendFactory factory;
    static long gapMillis;
    /** Every sandbox not closed yet, closed on the way out whatever happened. */
    static final java.util.Set<Sandbox> OPEN = java.util.concurrent.ConcurrentHashMap.newKeySet();

    public static void main(String[] args) throws Exception {
        Path envd = Path.of(args[0]);
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 30;
        String poolSize = args.length > 2 ? args[2] : "0";
        gapMillis = poolSize.equals("0") ? 0 : 500;
        Path work = Files.createTempDirectory(Path.of("/var/tmp"), "aenv-bench-");
        factory = ServiceLoader.load(SandboxBackendFactory.class).stream().map(ServiceLoader.Provider::get)
                .filter(f -> f.name().equals("container")).findFirst().orElseThrow();
        String laneValue = System.getenv("AENV_BENCH_LANE");
        if (laneValue == null || !laneValue.matches("[0-7]")) {
            throw new IllegalStateException("AENV_BENCH_LANE must be 0..7 (run through bench/container/run.sh, which claims a lane)");
        }
        int lane = Integer.parseInt(laneValue);
        Map<String, String> settings = new java.util.HashMap<>(Map.of("name_prefix", "aenvb" + lane,
                "run_dir", "/run/agentenv/bench-" + lane, "cgroup_parent", "agentenv-tests",
                "first_slot", Integer.toString(9216 + 64 * lane), "max_sandboxes", "64",
                "id_prefix", "bench" + lane + "-", "envd_dir", envd.toString()));
        settings.putAll(Map.of("cpu_count", "1", "memory_mb", "512", "pool_size", poolSize));
        String hostEnv = System.getenv("AENV_BENCH_HOST_ENV"); // another host.env (e.g. another CRIU build) for A/B runs
        if (hostEnv != null) {
            settings.put("host_env", hostEnv);
        }
        factory.initialize(new BackendContext(work, settings));
        System.out.printf(Locale.ROOT, "lane %d, warm pool size %s%s%n", lane, poolSize,
                gapMillis > 0 ? " (sequential creates " + gapMillis + " ms apart, so the pool refills in between)" : "");
        factory.reapUnclaimed(java.util.Set.of());
        try {
            run(n, work, args.length > 3 && args[3].equals("pause"));
        } finally {
            for (Sandbox s : List.copyOf(OPEN)) {
                s.close();
            }
            factory.shutdown();
            new ProcessBuilder("rm", "-rf", "--one-file-system", work.toString()).inheritIO().start().waitFor();
        }
    }

    /** Pause to disk then resume, n times, with a background process that must survive; returns the resumed sandbox. */
    static Sandbox pauseAndResume(Sandbox s, int n, Path work) throws Exception {
        List<Double> pause = new ArrayList<>();
        List<Double> resume = new ArrayList<>();
        s.background("sleep 100000");
        for (int i = 0; i < n; i++) {
            Path dir = work.resolve("paused-" + i);
            long start = System.nanoTime();
            PausedState paused = s.backend.pause(PauseMode.WITH_MEMORY, dir);
            pause.add(ms(start));
            s.backend.close();
            start = System.nanoTime();
            s = s.resume(paused);
            s.run("true");
            resume.add(ms(start));
            rm(dir);
        }
        report("pause (checkpoint to disk, stop)", pause);
        report("resume (restore + /init + run `true`)", resume);
        return s;
    }

    static void run(int n, Path work, boolean pauseOnly) throws Exception {
        if (pauseOnly) { // only the pause and resume rows: for work on the pause path
            Sandbox.create().close(); // builds the template's boot image when needed
            Sandbox s = Sandbox.create();
            s.run("true");
            pauseAndResume(s, n, work).close();
            return;
        }
        // the first create builds the template's boot image (boot envd, checkpoint): reported apart
        long t0 = System.nanoTime();
        Sandbox first = Sandbox.create();
        System.out.printf(Locale.ROOT, "first create (builds the template boot image): %.0f ms%n", ms(t0));
        first.close();
        for (int i = 0; i < 3; i++) {
            Sandbox.create().close(); // warm-up
        }

        List<Double> tti = new ArrayList<>();
        List<Double> create = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread.sleep(gapMillis);
            long start = System.nanoTime();
            Sandbox s = Sandbox.create();
            create.add(ms(start));
            s.run("true");
            tti.add(ms(start));
            s.close();
        }
        report("create (prepare+start: restore + /init)", create);
        report("time to interactive (create + run `true`)", tti);

        Thread.sleep(gapMillis * 4);
        List<Double> burst = new ArrayList<>();
        List<Sandbox> many = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Sandbox>> futures = new ArrayList<>();
            long start = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                futures.add(pool.submit(() -> {
                    long s0 = System.nanoTime();
                    Sandbox s = Sandbox.create();
                    s.run("true");
                    synchronized (burst) {
                        burst.add(ms(s0));
                    }
                    return s;
                }));
            }
            for (Future<Sandbox> f : futures) {
                many.add(f.get());
            }
            System.out.printf(Locale.ROOT, "20-way burst: all interactive after %.0f ms%n", ms(start));
        }
        report("time to interactive, 20-way burst (each)", burst);
        Thread.sleep(2000);
        long rss = 0;
        int groups = 0;
        try (var dirs = Files.list(Path.of("/sys/fs/cgroup/memory/agentenv-tests"))) {
            for (Path dir : dirs.filter(d -> d.getFileName().toString().startsWith("bench-")).toList()) {
                rss += residentBytes(dir);
                groups++;
            }
        }
        System.out.printf(Locale.ROOT, "resident memory per idle sandbox (cgroup total_rss+mapped_file, avg of %d): %.1f MiB%n",
                groups, rss / (double) groups / (1 << 20));
        for (Sandbox s : many) {
            s.close();
        }

        Sandbox s = Sandbox.create();
        List<Double> exec = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            s.run("true");
        }
        for (int i = 0; i < Math.max(n, 100); i++) {
            long start = System.nanoTime();
            s.run("true");
            exec.add(ms(start));
        }
        report("run `true` on a running sandbox (envd process.Start until end)", exec);

        s = pauseAndResume(s, n, work);

        List<Double> snap = new ArrayList<>();
        List<Double> fork1 = new ArrayList<>();
        List<Double> fork10 = new ArrayList<>();
        for (int i = 0; i < Math.max(5, n / 3); i++) {
            Path dir = work.resolve("snap-" + i);
            long start = System.nanoTime();
            SnapshotState state = s.backend.snapshot(dir);
            snap.add(ms(start));
            start = System.nanoTime();
            Sandbox child = Sandbox.launch(new LaunchSource.Snapshot(state));
            child.run("true");
            fork1.add(ms(start));
            child.close();
            if (i < 5) {
                start = System.nanoTime();
                List<Sandbox> children = new ArrayList<>();
                try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                    List<Future<Sandbox>> futures = new ArrayList<>();
                    for (int c = 0; c < 10; c++) {
                        futures.add(pool.submit(() -> Sandbox.launch(new LaunchSource.Snapshot(state))));
                    }
                    for (Future<Sandbox> f : futures) {
                        children.add(f.get());
                    }
                }
                fork10.add(ms(start));
                for (Sandbox c : children) {
                    c.close();
                }
            }
            rm(dir);
        }
        report("snapshot (freeze, copy upper, checkpoint leave-running, thaw)", snap);
        report("fork x1 (restore a child + /init + run `true`; snapshot not included)", fork1);
        report("fork x10 (10 children restored concurrently, all ready)", fork10);
        s.close();
    }

    static long residentBytes(Path cgroup) throws Exception {
        long total = 0;
        for (String line : Files.readAllLines(cgroup.resolve("memory.stat"))) {
            if (line.startsWith("total_rss ") || line.startsWith("total_mapped_file ")) {
                total += Long.parseLong(line.substring(line.indexOf(' ') + 1).strip());
            }
        }
        return total;
    }

    static void rm(Path dir) throws Exception {
        new ProcessBuilder("rm", "-rf", dir.toString()).start().waitFor();
    }

    static double ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e6;
    }

    static void report(String what, List<Double> samples) {
        List<Double> sorted = samples.stream().sorted().toList();
        System.out.printf(Locale.ROOT, "%-75s n=%3d  p50 %7.1f ms  p95 %7.1f ms  max %7.1f ms%n", what, sorted.size(),
                pct(sorted, 0.50), pct(sorted, 0.95), sorted.getLast());
    }

    static double pct(List<Double> sorted, double p) {
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p * sorted.size()) - 1));
    }

    /** One sandbox generation and the commands run in it through envd. */
    record Sandbox(LaunchSpec spec, SandboxBackend backend) {
        static Sandbox create() throws Exception {
            return launch(new LaunchSource.Template(BASE));
        }

        static Sandbox launch(LaunchSource source) throws Exception {
            LaunchSpec spec = new LaunchSpec(SandboxId.random(RANDOM), BASE, Map.of(), "user",
                    new AccessToken("bench-" + RANDOM.nextLong()), NetworkPolicy.DEFAULT);
            SandboxBackend backend = factory.prepare(spec, source);
            try {
                backend.start(READY);
            } catch (Exception e) {
                backend.close();
                throw e;
            }
            Sandbox sandbox = new Sandbox(spec, backend);
            OPEN.add(sandbox);
            return sandbox;
        }

        Sandbox resume(PausedState paused) throws Exception {
            SandboxBackend resumed = factory.prepare(spec, new LaunchSource.Paused(paused));
            resumed.start(READY);
            Sandbox sandbox = new Sandbox(spec, resumed);
            OPEN.add(sandbox);
            return sandbox;
        }

        void close() throws Exception {
            OPEN.remove(this);
            backend.close();
        }

        /** Runs `bash -c script` through envd until its end event. */
        void run(String script) throws Exception {
            try (DataInputStream in = start(script)) {
                while (true) {
                    if (!next(in).path("event").path("end").isMissingNode()) {
                        return;
                    }
                }
            }
        }

        void background(String script) throws Exception {
            try (DataInputStream in = start(script)) {
                while (!next(in).path("event").path("start").path("pid").isNumber()) {
                    // until the start event
                }
            }
        }

        private DataInputStream start(String script) throws Exception {
            GuestEndpoint guest = backend.guest().orElseThrow();
            byte[] message = JSON.writeValueAsBytes(Map.of("process", Map.of("cmd", "/bin/bash", "args", List.of("-c", script))));
            ByteBuffer envelope = ByteBuffer.allocate(5 + message.length).put((byte) 0).putInt(message.length).put(message);
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + guest.host() + ":" + guest.port() + "/process.Process/Start"))
                    .timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/connect+json")
                    .header("X-Access-Token", spec.accessToken().value())
                    .header("Authorization", "Basic " + Base64.getEncoder().encodeToString("user:".getBytes(StandardCharsets.UTF_8)))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(envelope.array()))
                    .build();
            HttpResponse<InputStream> response = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
            if (response.statusCode() != 200) {
                throw new IllegalStateException("process start answered " + response.statusCode());
            }
            return new DataInputStream(response.body());
        }

        private static JsonNode next(DataInputStream in) throws Exception {
            int flags = in.readUnsignedByte();
            byte[] body = new byte[in.readInt()];
            in.readFully(body);
            JsonNode node = JSON.readTree(body);
            if ((flags & 0x02) != 0) {
                throw new IllegalStateException("process stream ended: " + node);
            }
            return node;
        }
    }
}
