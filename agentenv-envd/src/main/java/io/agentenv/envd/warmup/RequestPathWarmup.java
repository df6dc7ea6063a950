package io.agentenv.envd.warmup;

import static java.util.Objects.requireNonNull;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.process.ProcessService;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.session.SessionState;
import io.agentenv.envd.users.UserDirectory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
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
 * new and kept-alive connections are exercised. Every other connection is a claimed sandbox's: it starts with the
 * host's claim, a {@code /init} with an access token, an env var and the default user over that connection into an
 * uninitialised session, and its requests carry the token in {@code X-Access-Token} (the SDK's requests after a
 * create); that {@code /init} is repeated in place of the unix-socket one. Without these, every claimed sandbox ran its
 * token check (and loaded its classes) for the first time at its first command.
 *
 * <p>Then it sends batches of SDK-shaped rounds ({@link #SETTLE_ROUNDS} each: a claim, then Starts as E2B's
 * {@code user} by Basic auth with the token, as {@code Sandbox.create} and {@code commands.run} send them) until one
 * leaves the JIT compiler idle ({@link JitSettling}): without that, a restored sandbox still interpreted and compiled
 * part of that path at its first commands (the N rounds alone leave methods called once a round uncompiled).
 *
 * <p>After that a full GC compacts the heap the checkpoint will hold, and {@value #ROUNDS_AFTER_GC} more rounds
 * (on token-less and on claimed connections) follow it: the GC armed the entry barrier of every compiled method, whose
 * first call after it then takes a slow path; these rounds take it once here instead of in every restored sandbox.
 * Last, a young collection empties eden ({@link YoungCollection}) and envd's memory is offered to the kernel's samepage
 * merging ({@link MergeableMemory}), so that the sandboxes restored from the checkpoint share what they have not written.
 *
 * <p>Then it leaves no trace: the session goes back to what it was before (uninitialised in a template's boot), its
 * processes are forgotten (not kept for Connect), its journal entries taken back ({@link LogJournal#discardFrom}) and
 * its lines cut from envd's stderr when that is a file (the container's envd log). {@code GET /ready} answers only
 * after all that (the host waits for it before the checkpoint); a failed warm-up is logged and still counts as
 * finished: the template then starts cold, as before. Runs only while nothing else uses envd (a template's boot): what others write to the
 * journal meanwhile is taken back too.
 */
public final class RequestPathWarmup {
    /**
     * Few rounds per connection: every claim comes on a new connection, whose set-up (jdk.httpserver's accept and
     * exchange set-up) then runs compiled (in a 20-way burst: C1 work per claim 0.3-0.6 -> ~0 ms, minor faults
     * 120 -> 50, claimed sandbox 10-10.7 -> 8.4-9.1 ms of CPU, measured with 8 rounds a connection and with 2).
     */
    static final int ROUNDS_PER_CONNECTION = 2;
    /** Rounds sent after the warm-up's full GC: every kind of request, on token-less and on claimed connections. */
    static final int ROUNDS_AFTER_GC = 8;
    /**
     * SDK-shaped rounds per settling batch, each on its own claimed connection (a claim, then one Start), as a new
     * sandbox's first command. With the interpreter notifying the compilation policy every 8 calls
     * ({@code -XX:Tier0InvokeNotifyFreqLog=3} in jvm.options; 128 by default, which with C1's queue-scaled thresholds
     * left once-a-command methods uncompiled for 600+ commands), 64 rounds a batch settled in 5 batches (locally:
     * 130 a batch without that option did not settle in 8; 48 took 7).
     */
    static final int SETTLE_ROUNDS = 64;

    static final int SETTLE_ROUNDS_PER_CONNECTION = 1;
    /** At most this many settling batches, none started after {@link #SETTLE_LIMIT}. */
    static final int SETTLE_BATCHES = 10;

    static final Duration SETTLE_LIMIT = Duration.ofSeconds(20);
    /** A batch that cost the compiler less than this much CPU counts as settled. */
    static final long SETTLE_QUIET_NANOS = 1_000_000;

    private static final Logger log = LoggerFactory.getLogger(RequestPathWarmup.class);
    /** What {@code commands.run} starts: the command follows as one argument. */
    static final List<String> SDK_SHELL = List.of("/bin/bash", "-l", "-c");

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    /** What the claim-shaped {@code /init} sets besides token and user (an env var, as a create with envs sends). */
    static final String WARMUP_ENV_VAR = "AGENTENV_WARMUP";

    private static final Duration KILL_WAIT = Duration.ofSeconds(5);
    private static final String DEFAULT_USER = "user";
    /** Headers as the SDK's requests carry them after the host's proxy (values like a real sandbox's). */
    private static final List<String> COMMON = List.of(
            "User-Agent: e2b-js-sdk/2.51.0",
            "Accept: */*",
            "Accept-Language: *",
            "Sec-Fetch-Mode: cors",
            "Accept-Encoding: gzip, deflate",
            "E2b-Sandbox-Id: iwarmup0000000000000",
            "E2b-Sandbox-Port: 49983",
            "X-Forwarded-For: 127.0.0.1",
            "X-Forwarded-Proto: http",
            "X-Forwarded-Host: 49983-iwarmup0000000000000.localhost:3000",
            "Connect-Protocol-Version: 1");

    private final int rounds;
    private final List<String> shell;
    private final int port;
    private final Optional<Path> unixSocket;
    private final ProcessService processes;
    private final LogJournal journal;
    private final Session session;
    private final Optional<String> basicAuth;
    private final Optional<String> claimUser;
    /** The claim-shaped {@code /init}'s token: valid only while the warm-up runs, never in a checkpoint. */
    private final String token;

    private final Duration timeout;
    private final JitSettling settling;
    private final int settleRounds;

    /**
     * @param rounds     how many rounds to send (0: none, /ready is not held back)
     * @param shell      the program and leading arguments each Start runs, the command following as the last argument
     *                   ({@link #SDK_SHELL} in envd)
     * @param port       envd's TCP port
     * @param unixSocket envd's unix socket, if it has one
     * @param timeout    how long a response may take (the warm-up fails after it)
     * @param settling   how SDK-shaped batches of {@code settleRounds} rounds run after the rounds, until the JIT is idle
     */
    RequestPathWarmup(
            int rounds,
            List<String> shell,
            int port,
            Optional<Path> unixSocket,
            ProcessService processes,
            LogJournal journal,
            Session session,
            UserDirectory users,
            Duration timeout,
            JitSettling settling,
            int settleRounds) {
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
        this.session = requireNonNull(session, "session is null");
        this.timeout = requireNonNull(timeout, "timeout is null");
        this.settling = requireNonNull(settling, "settling is null");
        if (settleRounds < 1) {
            throw new IllegalArgumentException("settleRounds must be positive: " + settleRounds);
        }
        this.settleRounds = settleRounds;
        this.claimUser = users.find(DEFAULT_USER).map(u -> u.name());
        this.basicAuth = claimUser.map(name -> "Authorization: Basic "
                + Base64.getEncoder().encodeToString((name + ":").getBytes(StandardCharsets.UTF_8)));
        // not a secret worth a SecureRandom: it opens nothing once the warm-up has restored the session
        ThreadLocalRandom random = ThreadLocalRandom.current();
        this.token = Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
    }

    /** The warm-up envd runs: {@link #SDK_SHELL}, this system's users. */
    public static RequestPathWarmup forSdk(
            int rounds,
            int port,
            Optional<Path> unixSocket,
            ProcessService processes,
            LogJournal journal,
            Session session) {
        CompilerThreads compiler = new CompilerThreads();
        JitSettling settling = new JitSettling(
                compiler::cpuNanos,
                System::nanoTime,
                d -> Thread.sleep(d),
                Duration.ofMillis(20),
                Duration.ofMillis(200),
                SETTLE_QUIET_NANOS,
                SETTLE_BATCHES,
                SETTLE_LIMIT);
        return new RequestPathWarmup(
                rounds,
                SDK_SHELL,
                port,
                unixSocket,
                processes,
                journal,
                session,
                UserDirectory.system(),
                TIMEOUT,
                settling,
                SETTLE_ROUNDS);
    }

    /**
     * Runs the warm-up on a background thread once {@code after} have completed (failed ones count), and completes
     * {@code done} when it has finished and erased its traces; at once when there are no rounds.
     */
    public void startInBackground(List<CompletableFuture<?>> after, CompletableFuture<Void> done) {
        if (rounds == 0) {
            done.complete(null);
            return;
        }
        CompletableFuture<Void> setUps = CompletableFuture.allOf(
                after.stream().map(f -> f.handle((value, failure) -> null)).toArray(CompletableFuture[]::new));
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
        SessionState before = session.current();
        OptionalLong stderrSize = StderrFile.appendedSize();
        Set<Long> pidsBefore = processes.knownPids();
        int requests = 0;
        int started = 0;
        Exception failure = null;
        boolean collected = false;
        JitSettling.Result settled = null;
        try {
            requests = drive(rounds, ROUNDS_PER_CONNECTION, before, false);
            settled = settling.run(() -> drive(settleRounds, SETTLE_ROUNDS_PER_CONNECTION, before, true));
            requests += settled.requests();
            // a compact heap for the checkpoint (Serial GC also gives freed heap back); a full GC also arms every
            // compiled method's entry barrier (HotSpot's nmethod entry barriers, which every collector uses to find
            // cold code), so each method's first call after it takes a slow path of a few microseconds: the rounds
            // after the GC take it here, not every restored sandbox at its first requests (~4 ms of CPU per claim)
            System.gc();
            collected = true;
            requests += drive(ROUNDS_AFTER_GC, ROUNDS_PER_CONNECTION, before, false);
        } catch (IOException | RuntimeException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = e;
        } finally {
            Set<Long> mine = new HashSet<>(processes.knownPids()); // nothing else starts processes meanwhile
            mine.removeAll(pidsBefore);
            started = mine.size();
            List<Long> left = List.of();
            try {
                left = processes.discard(mine, Instant.now().plus(KILL_WAIT));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                left = List.copyOf(mine);
            }
            session.restore(before);
            journal.discardFrom(mark);
            stderrSize.ifPresent(StderrFile::cutTo);
            if (!left.isEmpty()) {
                log.atWarn().addKeyValue("pids", left).log("request warm-up: processes did not end, still listed");
            }
        }
        if (!collected) {
            System.gc();
        }
        boolean edenEmptied = YoungCollection.runNext(64L << 20, Duration.ofSeconds(2));
        offerForMerging();
        if (failure != null) {
            log.atWarn()
                    .setCause(failure)
                    .addKeyValue("requests", requests)
                    .log("request warm-up failed; envd stays cold");
        } else {
            log.atDebug()
                    .addKeyValue("requests", requests)
                    .addKeyValue("processes", started)
                    .addKeyValue("eden_emptied", edenEmptied)
                    .addKeyValue("settle_batches", settled.batches())
                    .addKeyValue("settled", settled.settled())
                    .addKeyValue(
                            "compiler_us",
                            Arrays.stream(settled.compilerCpu())
                                    .map(n -> n / 1000)
                                    .boxed()
                                    .toList())
                    .addKeyValue(
                            "took_ms",
                            Duration.ofNanos(System.nanoTime() - startNanos).toMillis())
                    .log("request path warmed");
        }
        return requests;
    }

    /**
     * Marks envd's memory mergeable ({@link MergeableMemory}) as the last step before the checkpoint; a kernel without
     * KSM refuses it, which costs nothing but the sharing. Its lines are DEBUG: the journal and stderr were already
     * cleared of the warm-up, and an INFO line here would be in every restored sandbox's logs.
     */
    private static void offerForMerging() {
        try {
            MergeableMemory.Outcome outcome = MergeableMemory.adviseAll();
            if (outcome.refused() > 0) {
                log.atDebug()
                        .addKeyValue("regions", outcome.regions())
                        .addKeyValue("refused", outcome.refused())
                        .addKeyValue("errno", outcome.lastErrno())
                        .log("request warm-up: the kernel refused to merge some of envd's memory (no KSM?)");
            } else {
                log.atDebug()
                        .addKeyValue("regions", outcome.regions())
                        .addKeyValue("mib", outcome.bytes() >> 20)
                        .log("request warm-up: envd's memory offered for merging");
            }
        } catch (IOException | RuntimeException e) {
            log.atWarn().setCause(e).log("request warm-up: envd's memory not offered for merging");
        }
    }

    /**
     * {@code count} rounds, {@code perConnection} a connection (every other one claimed), each connection with the
     * session as {@code uninitialised}; returns the requests sent. SDK-shaped ({@code sdkOnly}): every connection is
     * claimed and a round is one Start as E2B's user (Basic auth, when the system has that user).
     */
    private int drive(int count, int perConnection, SessionState uninitialised, boolean sdkOnly) throws IOException {
        int requests = 0;
        LoopbackHttp http = null;
        try {
            for (int round = 0; round < count; round++) {
                boolean claimed = sdkOnly || (round / perConnection) % 2 == 1;
                if (http == null || !http.isOpen() || round % perConnection == 0) {
                    if (http != null) {
                        http.close();
                    }
                    http = LoopbackHttp.tcp(port, timeout);
                    session.restore(uninitialised);
                    if (claimed) {
                        claim(http, round);
                        requests++;
                    }
                }
                if (sdkOnly) {
                    start(http, round, true, true);
                    requests++;
                    continue;
                }
                start(http, round, claimed, false);
                expect(
                        200,
                        http.send(
                                "POST", "/process.Process/List", unary(claimed), "{}".getBytes(StandardCharsets.UTF_8)),
                        "List");
                requests += 3;
                switch (round % 4) {
                    case 0 ->
                        expect(
                                200,
                                http.send(
                                        "POST",
                                        "/filesystem.Filesystem/Stat",
                                        withAuth(unary(claimed), round),
                                        "{\"path\":\"/\"}".getBytes(StandardCharsets.UTF_8)),
                                "Stat");
                    case 1 ->
                        expect(
                                200,
                                http.send(
                                        "POST",
                                        "/filesystem.Filesystem/ListDir",
                                        withAuth(unary(claimed), round),
                                        "{\"path\":\"/\",\"depth\":1}".getBytes(StandardCharsets.UTF_8)),
                                "ListDir");
                    case 2 -> expect(204, http.send("GET", "/health", COMMON, null), "/health");
                    default -> {
                        if (claimed) {
                            session.restore(uninitialised);
                            claim(http, round);
                        } else {
                            init();
                        }
                    }
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
    private void start(LoopbackHttp http, int round, boolean claimed, boolean asUser) throws IOException {
        String command = round % 2 == 0 ? "true" : "echo warm";
        List<String> headers = new ArrayList<>(COMMON);
        headers.addAll(List.of(
                "Content-Type: application/connect+json", "Connect-Timeout-Ms: 60000", "Keepalive-Ping-Interval: 50"));
        if (claimed) {
            headers.add(tokenHeader());
        }
        LoopbackHttp.Response response = http.send(
                "POST",
                "/process.Process/Start",
                withAuth(headers, asUser ? 1 : round / 2),
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

    /**
     * The host's claim of a warm sandbox: {@code POST /init} with token, an env var, E2B's default user (when the
     * system has it) and the host's time, over the connection the host keeps (an uninitialised session).
     */
    private void claim(LoopbackHttp http, int round) throws IOException {
        JsonObject env = new JsonObject();
        env.addProperty(WARMUP_ENV_VAR, Integer.toString(round));
        JsonObject init = new JsonObject();
        init.addProperty("accessToken", token);
        init.add("envVars", env);
        claimUser.ifPresent(user -> init.addProperty("defaultUser", user));
        init.addProperty("timestamp", Instant.now().toString());
        List<String> headers =
                List.of("Content-Type: application/json", "Accept-Encoding: gzip", "User-Agent: agentenv-envd-client");
        expect(
                204,
                http.send("POST", "/init", headers, init.toString().getBytes(StandardCharsets.UTF_8)),
                "claim /init");
    }

    private String tokenHeader() {
        return "X-Access-Token: " + token;
    }

    /** The host's {@code POST /init} over the unix socket (changing nothing: no token, user or variables). */
    private void init() throws IOException {
        if (unixSocket.isEmpty()) {
            return;
        }
        try (LoopbackHttp http = LoopbackHttp.unix(unixSocket.get(), timeout)) {
            expect(
                    204,
                    http.send(
                            "POST",
                            "/init",
                            List.of("Content-Type: application/json", "Connection: close"),
                            ("{\"envVars\":{},\"timestamp\":\"" + Instant.now() + "\"}")
                                    .getBytes(StandardCharsets.UTF_8)),
                    "/init");
        }
    }

    private List<String> unary(boolean claimed) {
        List<String> headers = new ArrayList<>(COMMON);
        headers.add("Content-Type: application/json");
        if (claimed) {
            headers.add(tokenHeader());
        }
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
}
