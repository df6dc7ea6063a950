package io.agentenv.envd.process;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.connect.CallContext;
import io.agentenv.envd.connect.ConnectRouter;
import io.agentenv.envd.connect.StreamSender;
import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.process.CloseStdinRequest;
import io.agentenv.envd.protocol.process.CloseStdinResponse;
import io.agentenv.envd.protocol.process.ConnectRequest;
import io.agentenv.envd.protocol.process.ConnectResponse;
import io.agentenv.envd.protocol.process.ListRequest;
import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.ProcessInput;
import io.agentenv.envd.protocol.process.ProcessSelector;
import io.agentenv.envd.protocol.process.SendInputRequest;
import io.agentenv.envd.protocol.process.SendInputResponse;
import io.agentenv.envd.protocol.process.SendSignalRequest;
import io.agentenv.envd.protocol.process.SendSignalResponse;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.envd.protocol.process.StreamInputRequest;
import io.agentenv.envd.protocol.process.StreamInputResponse;
import io.agentenv.envd.protocol.process.UpdateRequest;
import io.agentenv.envd.protocol.process.UpdateResponse;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.session.SessionState;
import io.agentenv.envd.users.Accounts;
import io.agentenv.envd.users.UserAccount;
import io.agentenv.envd.users.UserPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/** {@code process.Process}: start, attach to, feed, signal and list processes. */
public final class ProcessService implements AutoCloseable {
    /** PATH for processes when envd itself has none (E2B's envd passes its own PATH on). */
    public static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private static final ProcessEvent KEEPALIVE = ProcessEvent.newBuilder()
            .setKeepalive(ProcessEvent.KeepAlive.getDefaultInstance())
            .build();

    /** The shells {@link #executableOrShell} stands in for. */
    private static final Set<String> SHELLS = Set.of("/bin/bash", "/usr/bin/bash", "bash", "/bin/sh", "sh");

    private final ProcessTable table;
    private final ProcessLauncher launcher;
    private final Accounts accounts;
    private final Session session;
    private final Clock clock;
    private final String searchPath;
    private final List<Path> fallbackShells;

    ProcessService(
            ProcessTable table,
            ProcessLauncher launcher,
            Accounts accounts,
            Session session,
            Clock clock,
            String searchPath) {
        this(table, launcher, accounts, session, clock, searchPath, Optional.empty());
    }

    ProcessService(
            ProcessTable table,
            ProcessLauncher launcher,
            Accounts accounts,
            Session session,
            Clock clock,
            String searchPath,
            Optional<Path> fallbackShell) {
        this.table = requireNonNull(table, "table is null");
        this.launcher = requireNonNull(launcher, "launcher is null");
        this.accounts = requireNonNull(accounts, "accounts is null");
        this.session = requireNonNull(session, "session is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.searchPath = requireNonNull(searchPath, "searchPath is null");
        List<Path> shells = new ArrayList<>(List.of(Path.of("/bin/sh")));
        requireNonNull(fallbackShell, "fallbackShell is null").ifPresent(shells::add);
        this.fallbackShells = List.copyOf(shells);
    }

    /**
     * Builds the service for this machine (real processes, real PTYs).
     *
     * @param searchPath the PATH processes start with (envd's own, as E2B's envd does)
     */
    public static ProcessService create(
            Accounts accounts,
            Session session,
            LogJournal journal,
            Clock clock,
            Duration exitedRetention,
            String searchPath)
            throws IOException {
        return create(accounts, session, journal, clock, exitedRetention, searchPath, Optional.empty());
    }

    /**
     * {@link #create(Accounts, Session, LogJournal, Clock, Duration, String)} with a shell for processes that ask for
     * {@code /bin/bash} or {@code /bin/sh} where the system has neither.
     */
    public static ProcessService create(
            Accounts accounts,
            Session session,
            LogJournal journal,
            Clock clock,
            Duration exitedRetention,
            String searchPath,
            Optional<Path> fallbackShell)
            throws IOException {
        ProcessLauncher launcher =
                ProcessLauncher.forThisMachine(PosixSignals.forThisMachine(fallbackShell), journal, clock);
        return new ProcessService(
                new ProcessTable(clock, exitedRetention),
                launcher,
                accounts,
                session,
                clock,
                searchPath,
                fallbackShell);
    }

    /** Starts the one-time set-up of the native process launcher on a background thread (only the first call does). */
    public void prepareInBackground() {
        launcher.prepareInBackground();
    }

    /** Completes once starting a process needs no more one-time set-up (see {@link ProcessLauncher#prepared}). */
    public CompletableFuture<?> prepared() {
        return launcher.prepared();
    }

    /** The pids of every process known now: running, or exited and still kept for Connect. */
    public Set<Long> knownPids() {
        return table.pids();
    }

    /**
     * Forgets these processes as if their retention had passed (for envd's own warm-up, whose processes must leave no
     * trace): the process group of one still running is killed first, and its end awaited until {@code deadline}.
     *
     * @return the pids that are still known (their process did not end in time)
     */
    public List<Long> discard(Collection<Long> pids, Instant deadline) throws InterruptedException {
        List<ChildProcess> children = new ArrayList<>();
        for (long pid : pids) {
            table.find(ProcessSelector.newBuilder().setPid((int) pid).build()).ifPresent(children::add);
        }
        for (ChildProcess child : children) {
            if (child.isRunning()) {
                child.killGroup();
            }
        }
        List<Long> left = new ArrayList<>();
        for (ChildProcess child : children) {
            CompletableFuture<Void> ended = new CompletableFuture<>();
            child.whenEnded(c -> ended.complete(null));
            try {
                ended.get(
                        Math.max(0, Duration.between(clock.instant(), deadline).toMillis()), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                left.add(child.pid());
                continue;
            }
            if (!table.forgetExited(child.pid())) {
                left.add(child.pid());
            }
        }
        return left;
    }

    public void register(ConnectRouter router) {
        router.unary("process.Process/List", ListRequest.getDefaultInstance(), this::list)
                .serverStream("process.Process/Start", StartRequest.getDefaultInstance(), this::start)
                .serverStream("process.Process/Connect", ConnectRequest.getDefaultInstance(), this::connect)
                .unary("process.Process/SendInput", SendInputRequest.getDefaultInstance(), this::sendInput)
                .clientStream("process.Process/StreamInput", StreamInputRequest.getDefaultInstance(), this::streamInput)
                .unary("process.Process/SendSignal", SendSignalRequest.getDefaultInstance(), this::sendSignal)
                .unary("process.Process/CloseStdin", CloseStdinRequest.getDefaultInstance(), this::closeStdin)
                .unary("process.Process/Update", UpdateRequest.getDefaultInstance(), this::update);
    }

    ListResponse list(ListRequest request, CallContext call) {
        ListResponse.Builder response = ListResponse.newBuilder();
        table.running().forEach(c -> response.addProcesses(c.info()));
        return response.build();
    }

    void start(StartRequest request, CallContext call, StreamSender<StartResponse> out) throws Exception {
        LaunchSpec spec = specFor(request, accounts.resolve(call.basicAuthUser()));
        ChildProcess child = launcher.launch(spec);
        table.add(child);
        try (Subscription subscription = child.subscribe()) {
            child.start(call.deadline());
            relay(
                    child,
                    subscription,
                    call,
                    e -> StartResponse.newBuilder().setEvent(e).build(),
                    out);
        }
    }

    void connect(ConnectRequest request, CallContext call, StreamSender<ConnectResponse> out) throws Exception {
        ChildProcess child = find(request.getProcess());
        try (Subscription subscription = child.subscribe()) {
            relay(
                    child,
                    subscription,
                    call,
                    e -> ConnectResponse.newBuilder().setEvent(e).build(),
                    out);
        }
    }

    SendInputResponse sendInput(SendInputRequest request, CallContext call) throws IOException {
        write(find(request.getProcess()), request.getInput());
        return SendInputResponse.getDefaultInstance();
    }

    StreamInputResponse streamInput(Iterator<StreamInputRequest> requests, CallContext call) throws IOException {
        ChildProcess child = null;
        while (requests.hasNext()) {
            StreamInputRequest request = requests.next();
            switch (request.getEventCase()) {
                case START -> child = find(request.getStart().getProcess());
                case DATA -> {
                    if (child == null) {
                        throw new RpcException(
                                ConnectCode.FAILED_PRECONDITION, "the first message must be a start event");
                    }
                    write(child, request.getData().getInput());
                }
                case KEEPALIVE, EVENT_NOT_SET -> {
                    // nothing to do
                }
            }
        }
        return StreamInputResponse.getDefaultInstance();
    }

    SendSignalResponse sendSignal(SendSignalRequest request, CallContext call) {
        ChildProcess child = find(request.getProcess());
        int signal = switch (request.getSignal()) {
            case SIGNAL_SIGKILL -> PosixSignals.SIGKILL;
            case SIGNAL_SIGTERM -> PosixSignals.SIGTERM;
            case SIGNAL_UNSPECIFIED, UNRECOGNIZED ->
                throw RpcException.invalidArgument("unsupported signal: " + request.getSignal());
        };
        if (!child.signal(signal)) {
            throw RpcException.notFound("process with pid " + child.pid() + " has already exited");
        }
        return SendSignalResponse.getDefaultInstance();
    }

    CloseStdinResponse closeStdin(CloseStdinRequest request, CallContext call) throws IOException {
        find(request.getProcess()).closeStdin();
        return CloseStdinResponse.getDefaultInstance();
    }

    UpdateResponse update(UpdateRequest request, CallContext call) {
        ChildProcess child = find(request.getProcess());
        if (request.hasPty()) {
            child.resize(
                    request.getPty().getSize().getCols(),
                    request.getPty().getSize().getRows());
        }
        return UpdateResponse.getDefaultInstance();
    }

    private ChildProcess find(ProcessSelector selector) {
        return switch (selector.getSelectorCase()) {
            case PID ->
                table.find(selector)
                        .orElseThrow(() -> RpcException.notFound(
                                "process with pid " + Integer.toUnsignedString(selector.getPid()) + " not found"));
            case TAG ->
                table.find(selector)
                        .orElseThrow(
                                () -> RpcException.notFound("process with tag " + selector.getTag() + " not found"));
            case SELECTOR_NOT_SET -> throw RpcException.invalidArgument("process selector (pid or tag) is required");
        };
    }

    private static void write(ChildProcess child, ProcessInput input) throws IOException {
        switch (input.getInputCase()) {
            case STDIN -> child.writeStdin(input.getStdin().toByteArray());
            case PTY -> child.writePty(input.getPty().toByteArray());
            case INPUT_NOT_SET -> throw RpcException.invalidArgument("input (stdin or pty) is required");
        }
    }

    /**
     * Sends start, then data as it comes, keepalives on quiet periods, then the end event. A deadline ends the stream
     * with {@code deadline_exceeded} (for Start the process itself is killed at the same instant). A client that goes
     * away only unsubscribes: the process keeps running.
     *
     * <p>Every event goes out as soon as nothing else is already waiting behind it: events queued together (a burst of
     * output, the end of a process that has just written) leave in one write, and the end event leaves with the
     * stream's end (end-of-stream envelope and terminating chunk), so a short command's tail is one write. Nothing is
     * held back to wait for more.
     */
    private <R> void relay(
            ChildProcess child,
            Subscription subscription,
            CallContext call,
            Function<ProcessEvent, R> wrap,
            StreamSender<R> out)
            throws IOException, InterruptedException {
        R start = wrap.apply(ProcessEvent.newBuilder()
                .setStart(ProcessEvent.StartEvent.newBuilder().setPid((int) child.pid()))
                .build());
        sendOrBatch(start, subscription, out);
        Duration keepalive = call.keepaliveInterval();
        Instant lastSent = clock.instant();
        while (true) {
            Instant now = clock.instant();
            if (call.deadline().filter(d -> !now.isBefore(d)).isPresent()) {
                throw new RpcException(ConnectCode.DEADLINE_EXCEEDED, "context deadline exceeded");
            }
            Duration wait = Duration.between(now, lastSent.plus(keepalive));
            if (call.deadline().isPresent()) {
                Duration untilDeadline = Duration.between(now, call.deadline().get());
                wait = wait.compareTo(untilDeadline) < 0 ? wait : untilDeadline;
            }
            Subscription.Item item = subscription.poll(wait);
            if (item == null) {
                if (!clock.instant().isBefore(lastSent.plus(keepalive))) {
                    out.send(wrap.apply(KEEPALIVE));
                    lastSent = clock.instant();
                }
                continue;
            }
            switch (item) {
                case Subscription.Item.Data data ->
                    sendOrBatch(
                            wrap.apply(ProcessEvent.newBuilder()
                                    .setData(data.event())
                                    .build()),
                            subscription,
                            out);
                case Subscription.Item.End end -> {
                    if (call.deadline()
                            .filter(d -> !clock.instant().isBefore(d))
                            .isPresent()) {
                        throw new RpcException(ConnectCode.DEADLINE_EXCEEDED, "context deadline exceeded");
                    }
                    out.write(wrap.apply(
                            ProcessEvent.newBuilder().setEnd(end.event()).build())); // the stream ends next
                    return;
                }
                case Subscription.Item.Overflow overflow ->
                    throw new RpcException(
                            ConnectCode.RESOURCE_EXHAUSTED,
                            "client is not reading output fast enough; reconnect to continue");
            }
            lastSent = clock.instant();
        }
    }

    /** Queues {@code event} when another item already waits behind it (it leaves with that one), else sends it. */
    private static <R> void sendOrBatch(R event, Subscription subscription, StreamSender<R> out) throws IOException {
        if (subscription.hasPending()) {
            out.write(event);
        } else {
            out.send(event);
        }
    }

    private LaunchSpec specFor(StartRequest request, UserAccount user) {
        ProcessConfig config = request.getProcess();
        if (config.getCmd().isEmpty()) {
            throw RpcException.invalidArgument("process.cmd is required");
        }
        validate(config);
        SessionState state = session.current();
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", searchPath);
        env.put("HOME", user.home().toString());
        env.put("USER", user.name());
        env.put("LOGNAME", user.name());
        env.put("SHELL", user.shell().isEmpty() ? "/bin/sh" : user.shell());
        env.putAll(state.envVars());
        env.putAll(config.getEnvsMap());

        Path cwd;
        if (config.hasCwd() && !config.getCwd().isEmpty()) {
            cwd = resolve(config.getCwd(), user, state);
            if (!Files.isDirectory(cwd)) {
                throw RpcException.invalidArgument("cwd '" + config.getCwd() + "' does not exist");
            }
        } else {
            cwd = UserPaths.defaultDirectory(user, state.defaultWorkdir());
        }
        Path executable = executableOrShell(config.getCmd(), cwd, env.get("PATH"), fallbackShells);
        Optional<LaunchSpec.PtySize> pty = request.hasPty()
                ? Optional.of(ptySize(
                        request.getPty().getSize().getCols(),
                        request.getPty().getSize().getRows()))
                : Optional.empty();
        boolean stdin = !request.hasStdin() || request.getStdin();
        Optional<String> tag = request.hasTag() ? Optional.of(request.getTag()) : Optional.empty();
        return new LaunchSpec(config, user, executable, config.getArgsList(), cwd, env, pty, stdin, tag);
    }

    /** What exec would refuse later with a less helpful error (NUL bytes; '=' or an empty name in a variable). */
    private static void validate(ProcessConfig config) {
        for (String arg : config.getArgsList()) {
            if (arg.indexOf('\0') >= 0) {
                throw RpcException.invalidArgument("process.args must not contain NUL bytes");
            }
        }
        for (Map.Entry<String, String> e : config.getEnvsMap().entrySet()) {
            if (e.getKey().isEmpty()
                    || e.getKey().indexOf('=') >= 0
                    || e.getKey().indexOf('\0') >= 0
                    || e.getValue().indexOf('\0') >= 0) {
                throw RpcException.invalidArgument("invalid environment variable name or value: '" + e.getKey() + "'");
            }
        }
    }

    private static Path resolve(String path, UserAccount user, SessionState state) {
        try {
            return UserPaths.resolve(path, user, state.defaultWorkdir());
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidArgument("invalid path '" + path + "': " + e.getMessage());
        }
    }

    private static LaunchSpec.PtySize ptySize(int cols, int rows) {
        try {
            return new LaunchSpec.PtySize(cols == 0 ? 80 : cols, rows == 0 ? 24 : rows);
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidArgument(e.getMessage());
        }
    }

    /**
     * {@link #executable}, except that a shell the system lacks ({@code bash}, which the SDKs run every command through,
     * or {@code sh}) is replaced by {@code /bin/sh}, else by the fallback shell: commands then also run on images
     * without bash or without any shell. Both take {@code -l -c script} as bash does.
     */
    static Path executableOrShell(String cmd, Path cwd, String path, List<Path> fallbackShells) {
        try {
            return executable(cmd, cwd, path);
        } catch (RpcException e) {
            if (!SHELLS.contains(cmd)) {
                throw e;
            }
            return fallbackShells.stream()
                    .filter(shell -> Files.isRegularFile(shell) && Files.isExecutable(shell))
                    .findFirst()
                    .orElseThrow(() -> e);
        }
    }

    /** Resolves the command like execvp does, so a missing command is a clear error before anything starts. */
    static Path executable(String cmd, Path cwd, String searchPath) {
        if (cmd.indexOf('\0') >= 0) {
            throw RpcException.invalidArgument("cmd contains a NUL byte");
        }
        if (cmd.contains("/")) {
            Path path = cwd.resolve(cmd).normalize();
            if (Files.isRegularFile(path) && Files.isExecutable(path)) {
                return path;
            }
            throw RpcException.invalidArgument(
                    "error starting process: fork/exec " + cmd + ": no such file or directory");
        }
        for (String dir : searchPath.split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir).resolve(cmd);
            if (candidate.isAbsolute() && Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw RpcException.invalidArgument(
                "error starting process: exec: \"" + cmd + "\": executable file not found in $PATH");
    }

    @Override
    public void close() {
        table.close();
        launcher.close();
    }
}
