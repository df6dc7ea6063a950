package io.agentenv.envd;

import static java.util.Objects.requireNonNull;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.process.ProcessService;
import io.agentenv.envd.users.UserDirectory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warms envd's request path before a template's envd is checkpointed ({@code --warm-requests N}, given by the host
 * only to a template's first envd): every sandbox is a restore of that checkpoint, so without this its first commands
 * run jdk.httpserver, Connect and process start-up interpreted (C1 compiles a method after ~200 calls), tens of
 * milliseconds each instead of ~10.
 *
 * <p>Once envd's other background set-ups are done, it sends {@code N} rounds of the requests a new sandbox sees
 * first, through its own TCP listener, shaped as the E2B SDK and the host's proxy send them: a {@code Start} of
 * {@code bash -l -c} with a streamed answer (alternately without and with output, and, when the system has E2B's
 * default user {@code user}, alternately as envd's default user and as that user by Basic auth, as
 * {@code commands.run} sends it), a {@code List}, and one of {@code Stat}, {@code ListDir}, {@code /health} and the
 * host's {@code /init} over the unix socket; a connection serves {@value #ROUNDS_PER_CONNECTION} rounds, so both
 * new and kept-alive connections are exercised.
 *
 * <p>Then it leaves no trace: its processes are forgotten (not kept for Connect), its journal entries taken back
 * ({@link LogJournal#discardFrom}) and its lines cut from envd's stderr when that is a file (the container's envd log),
 * and a full GC compacts the heap the checkpoint will hold. {@code GET /ready} answers only after all that (the
 * host waits for it before the checkpoint); a failed warm-up is logged and still counts as finished: the template
 * then starts cold, as before. Runs only while nothing else uses envd (a template's boot): what others write to the
 * journal meanwhile is taken back too.
 */
final class RequestPathWarmup {
    static final int ROUNDS_PER_CONNECTION = 8;
    private static final Logger log = LoggerFactory.getLogger(RequestPathWarmup.class);
    /** What {@code commands.run} starts: the command follows as one argument. */
    static final List<String> SDK_SHELL = List.of("/bin/bash", "-l", "-c");
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Duration KILL_WAIT = Duration.ofSeconds(5);
    private static final long O_APPEND = 02000;
    private static final String DEFAULT_USER = "user";
    private static final Path STDERR = Path.of("/proc/self/fd/2");
    /** Headers as the SDK's requests carry them after the host's proxy (values like a real sandbox's). */
    private static final List<String> COMMON = List.of("User-Agent: e2b-js-sdk/2.51.0", "Accept: */*",
            "Accept-Language: *", "Sec-Fetch-Mode: cors", "Accept-Encoding: gzip, deflate",
            "E2b-Sandbox-Id: iwarmup0000000000000", "E2b-Sandbox-Port: 49983", "X-Forwarded-For: 127.0.0.1",
            "X-Forwarded-Proto: http", "X-Forwarded-Host: 49983-iwarmup0000000000000.localhost:3000",
            "Connect-Protocol-Version: 1");

    private final int rounds;
    private final List<String> shell;
    private final int port;
    private final Optional<Path> unixSocket;
    private final ProcessService processes;
    private final LogJournal journal;
    private final Optional<String> basicAuth;
    private final Duration timeout;

    /**
     * @param rounds     how many rounds to send (0: none, /ready is not held back)
     * @param shell      the program and leading arguments each Start runs, the command following as the last argument
     *                   ({@link #SDK_SHELL} in envd)
     * @param port       envd's TCP port
     * @param unixSocket envd's unix socket, if it has one
     * @param timeout    how long a response may take (the warm-up fails after it)
     */
    RequestPathWarmup(int rounds, List<String> shell, int port, Optional<Path> unixSocket, ProcessService processes,
                      LogJournal journal, UserDirectory users, Duration timeout) {
        if (rounds < 0) {
            throw new IllegalArgumentException("rounds must not be negative: " + rounds);
        }
        if (shell.isEmpty()) {
            throw new IllegalArgumentException("shell is empty");
        }
        this.rounds = rounds;
        this.shell = List.copyOf(shell);
        this.port = port;
        this.unixSocket = requireNonNull(unixSocket, "unixSocket is null");
        this.processes = requireNonNull(processes, "processes is null");
        this.journal = requireNonNull(journal, "journal is null");
        this.timeout = requireNonNull(timeout, "timeout is null");
        this.basicAuth = users.find(DEFAULT_USER).map(u -> "Authorization: Basic "
                + Base64.getEncoder().encodeToString((u.name() + ":").getBytes(StandardCharsets.UTF_8)));
    }

    /** The warm-up envd runs: {@link #SDK_SHELL}, this system's users. */
    static RequestPathWarmup forSdk(int rounds, int port, Optional<Path> unixSocket, ProcessService processes,
                                    LogJournal journal) {
        return new RequestPathWarmup(rounds, SDK_SHELL, port, unixSocket, processes, journal, UserDirectory.system(),
                TIMEOUT);
    }

    /**
     * Runs the warm-up on a background thread once {@code after} have completed (failed ones count), and completes
     * {@code done} when it has finished and erased its traces; at once when there are no rounds.
     */
    void startInBackground(List<CompletableFuture<?>> after, CompletableFuture<Void> done) {
        if (rounds == 0) {
            done.complete(null);
            return;
        }
        CompletableFuture<Void> setUps = CompletableFuture.allOf(after.stream()
                .map(f -> f.handle((value, failure) -> null)).toArray(CompletableFuture[]::new));
        Thread.ofPlatform().name("envd-request-warmup").daemon().start(() -> {
            try {
                setUps.join();
                run();
            } finally {
                done.complete(null);
            }
        });
    }

    /** The rounds, then the erasure; returns the number of requests sent. */
    int run() {
        long startNanos = System.nanoTime();
        long mark = journal.mark();
        OptionalLong stderrSize = appendedStderrSize();
        Set<Long> before = processes.knownPids();
        int requests = 0;
        int started = 0;
        Exception failure = null;
        try {
            requests = drive();
        } catch (IOException | RuntimeException e) {
            failure = e;
        } finally {
            Set<Long> mine = new HashSet<>(processes.knownPids()); // nothing else starts processes meanwhile
            mine.removeAll(before);
            started = mine.size();
            List<Long> left = List.of();
            try {
                left = processes.discard(mine, Instant.now().plus(KILL_WAIT));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                left = List.copyOf(mine);
            }
            journal.discardFrom(mark);
            stderrSize.ifPresent(RequestPathWarmup::truncateStderr);
            if (!left.isEmpty()) {
                log.atWarn().addKeyValue("pids", left).log("request warm-up: processes did not end, still listed");
            }
        }
        System.gc(); // a compact heap for the checkpoint (Serial GC also gives freed heap back)
        if (failure != null) {
            log.atWarn().setCause(failure).addKeyValue("requests", requests).log("request warm-up failed; envd stays cold");
        } else {
            log.atDebug().addKeyValue("requests", requests).addKeyValue("processes", started)
                    .addKeyValue("took_ms", Duration.ofNanos(System.nanoTime() - startNanos).toMillis())
                    .log("request path warmed");
        }
        return requests;
    }

    private int drive() throws IOException {
        int requests = 0;
        LoopbackHttp http = null;
        try {
            for (int round = 0; round < rounds; round++) {
                if (http == null || !http.isOpen() || round % ROUNDS_PER_CONNECTION == 0) {
                    if (http != null) {
                        http.close();
                    }
                    http = LoopbackHttp.tcp(port, timeout);
                }
                start(http, round);
                expect(200, http.send("POST", "/process.Process/List", unary(), "{}".getBytes(StandardCharsets.UTF_8)), "List");
                requests += 3;
                switch (round % 4) {
                    case 0 -> expect(200, http.send("POST", "/filesystem.Filesystem/Stat", withAuth(unary(), round),
                            "{\"path\":\"/\"}".getBytes(StandardCharsets.UTF_8)), "Stat");
                    case 1 -> expect(200, http.send("POST", "/filesystem.Filesystem/ListDir", withAuth(unary(), round),
                            "{\"path\":\"/\",\"depth\":1}".getBytes(StandardCharsets.UTF_8)), "ListDir");
                    case 2 -> expect(204, http.send("GET", "/health", COMMON, null), "/health");
                    default -> init();
                }
            }
        } finally {
            if (http != null) {
                http.close();
            }
        }
        return requests;
    }

    /** One {@code commands.run}: a Start whose stream is read to its end. */
    private void start(LoopbackHttp http, int round) throws IOException {
        String command = round % 2 == 0 ? "true" : "echo warm";
        List<String> headers = new ArrayList<>(COMMON);
        headers.addAll(List.of("Content-Type: application/connect+json", "Connect-Timeout-Ms: 60000",
                "Keepalive-Ping-Interval: 50"));
        LoopbackHttp.Response response = http.send("POST", "/process.Process/Start", withAuth(headers, round / 2),
                LoopbackHttp.envelope(startRequest(command)));
        expect(200, response, "Start");
        String end = endStream(response.body());
        if (!end.equals("{}")) {
            throw new IOException("warm-up Start ended with " + end);
        }
    }

    /** The Start request's JSON as the SDK writes it. */
    private String startRequest(String command) {
        JsonArray args = new JsonArray();
        shell.subList(1, shell.size()).forEach(args::add);
        args.add(command);
        JsonObject process = new JsonObject();
        process.addProperty("cmd", shell.getFirst());
        process.add("args", args);
        JsonObject request = new JsonObject();
        request.add("process", process);
        request.addProperty("stdin", false);
        return request.toString();
    }

    /** The host's {@code POST /init} over the unix socket (changing nothing: no token, user or variables). */
    private void init() throws IOException {
        if (unixSocket.isEmpty()) {
            return;
        }
        try (LoopbackHttp http = LoopbackHttp.unix(unixSocket.get())) {
            expect(204, http.send("POST", "/init", List.of("Content-Type: application/json", "Connection: close"),
                    ("{\"envVars\":{},\"timestamp\":\"" + Instant.now() + "\"}").getBytes(StandardCharsets.UTF_8)), "/init");
        }
    }

    private static List<String> unary() {
        List<String> headers = new ArrayList<>(COMMON);
        headers.add("Content-Type: application/json");
        return headers;
    }

    private List<String> withAuth(List<String> headers, int turn) {
        if (basicAuth.isPresent() && turn % 2 == 1) {
            headers.add(basicAuth.get());
        }
        return headers;
    }

    private static void expect(int status, LoopbackHttp.Response response, String what) throws IOException {
        if (response.status() != status) {
            throw new IOException("warm-up " + what + " answered " + response.status() + ": " + response.text());
        }
    }

    /** The JSON of a Connect stream's end-stream envelope (the last one, flags 0x02). */
    static String endStream(byte[] body) throws IOException {
        ByteBuffer in = ByteBuffer.wrap(body);
        while (in.remaining() >= 5) {
            byte flags = in.get();
            int length = in.getInt();
            if (length < 0 || length > in.remaining()) {
                throw new IOException("incomplete Connect envelope");
            }
            String json = new String(body, in.position(), length, StandardCharsets.UTF_8);
            in.position(in.position() + length);
            if ((flags & 0x02) != 0) {
                return json;
            }
        }
        throw new IOException("Connect stream without an end-stream envelope");
    }

    /**
     * envd's stderr size when it is a regular file opened for appending (the container's envd log, {@code >>}), to cut
     * the warm-up's lines off again; empty otherwise (a pipe, or a file written at an offset, which a cut would leave a
     * hole in).
     */
    private static OptionalLong appendedStderrSize() {
        System.err.flush();
        try {
            if (!Files.isRegularFile(STDERR)) {
                return OptionalLong.empty();
            }
            for (String line : Files.readAllLines(Path.of("/proc/self/fdinfo/2"))) {
                if (line.startsWith("flags:") && (Long.parseLong(line.substring(6).strip(), 8) & O_APPEND) != 0) {
                    return OptionalLong.of(Files.size(STDERR));
                }
            }
            return OptionalLong.empty();
        } catch (IOException | NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    private static void truncateStderr(long size) {
        System.err.flush();
        try (FileChannel file = FileChannel.open(STDERR, StandardOpenOption.WRITE)) { // the same file, opened anew
            if (file.size() > size) {
                file.truncate(size);
            }
        } catch (IOException e) {
            log.atWarn().addKeyValue("error", e.toString()).log("request warm-up: could not cut its lines from envd's log");
        }
    }
}
