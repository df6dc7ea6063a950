package io.agentenv.envd.process;

import static java.util.Objects.requireNonNull;

import com.pty4j.PtyProcess;
import com.pty4j.PtyProcessBuilder;
import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.users.UserAccount;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts processes as a given user: a piped process without stdin gets its own session and process group from
 * {@link NativeSpawn}'s {@code POSIX_SPAWN_SETSID}; one with stdin (or where the native launcher is unavailable) from
 * util-linux {@code setsid} started by the JDK; pty4j does that itself for a pty. When envd runs as root, a piped
 * process without stdin of another user starts with that user's credentials directly ({@link CredentialSwitch}: no
 * helper program); the others (stdin, pty, the JDK path before the native launcher is ready) go through util-linux
 * {@code setpriv --reuid --regid --groups}. Nothing of envd's own environment is inherited.
 */
final class ProcessLauncher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProcessLauncher.class);
    /** Output readers of JDK-started processes: a virtual thread each (the JDK's pipe reads let the carrier go). */
    private static final Executor VIRTUAL_READERS =
            task -> Thread.ofVirtual().name("envd-output-reader").start(task);
    /**
     * Output readers of pty processes: a platform thread each. pty4j reads the pty master with a native call, which
     * would pin a virtual thread's carrier for as long as the shell is idle: with as many open terminals as carriers
     * (two), every other request of envd would wait.
     */
    private static final Executor PTY_READERS =
            task -> Thread.ofPlatform().name("envd-pty-reader").daemon().start(task);

    private static final List<String> TOOL_DIRS = List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin");

    private final int envdUid;
    private final Optional<Path> setsid;
    private final Optional<Path> setpriv;
    private final CompletableFuture<Optional<NativeSpawn>> nativeSpawn;
    private final AtomicBoolean preparationStarted = new AtomicBoolean();
    private final PosixSignals signals;
    private final LogJournal journal;
    private final Clock clock;

    /** @param nativeSpawn completes with the native launcher, or empty to start piped processes through the JDK */
    ProcessLauncher(
            int envdUid,
            Optional<Path> setsid,
            Optional<Path> setpriv,
            CompletableFuture<Optional<NativeSpawn>> nativeSpawn,
            PosixSignals signals,
            LogJournal journal,
            Clock clock) {
        this.envdUid = envdUid;
        this.setsid = requireNonNull(setsid, "setsid is null");
        this.setpriv = requireNonNull(setpriv, "setpriv is null");
        this.nativeSpawn = requireNonNull(nativeSpawn, "nativeSpawn is null");
        this.signals = requireNonNull(signals, "signals is null");
        this.journal = requireNonNull(journal, "journal is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /**
     * The launcher for this machine. Its native launcher is prepared once {@link #prepareInBackground} is called;
     * piped processes started before it is ready go through the JDK.
     */
    static ProcessLauncher forThisMachine(PosixSignals signals, LogJournal journal, Clock clock) throws IOException {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        return new ProcessLauncher(
                uid, tool("setsid"), tool("setpriv"), new CompletableFuture<>(), signals, journal, clock);
    }

    /**
     * Prepares the native launcher on a background thread (linking its calls takes tens of milliseconds of CPU); only
     * the first call starts it. envd calls this once it listens, so that the set-up does not compete with its wiring.
     */
    void prepareInBackground() {
        if (preparationStarted.compareAndSet(false, true) && !nativeSpawn.isDone()) {
            Thread.ofPlatform().name("envd-spawn-init").daemon().start(() -> nativeSpawn.complete(NativeSpawn.load()));
        }
    }

    /**
     * Completes once the native launcher is prepared (or known to be unavailable), which starts with
     * {@link #prepareInBackground}. Until then piped processes start
     * through the JDK (a few milliseconds slower each, but no request waits for the set-up); envd's {@code GET /ready}
     * waits for it, so that the host never checkpoints an envd whose every restored copy would redo this set-up.
     */
    CompletableFuture<?> prepared() {
        return nativeSpawn;
    }

    private static Optional<Path> tool(String name) {
        return TOOL_DIRS.stream()
                .map(d -> Path.of(d, name))
                .filter(Files::isExecutable)
                .findFirst();
    }

    ChildProcess launch(LaunchSpec spec) {
        List<String> command = new ArrayList<>(spec.args().size() + 1);
        command.add(spec.executable().toString());
        command.addAll(spec.args());
        try {
            ChildProcess child = spec.pty().isPresent()
                    ? startPty(spec, withPrivilegeDrop(spec.user(), command))
                    : startPiped(spec, command);
            journal.processEvent(
                    (int) child.pid(),
                    "started as " + spec.user().name() + ": " + spec.config().getCmd() + " "
                            + String.join(" ", spec.args()));
            log.atInfo()
                    .addKeyValue("pid", child.pid())
                    .addKeyValue("user", spec.user().name())
                    .addKeyValue("pty", spec.pty().isPresent())
                    .addKeyValue("cmd", spec.config().getCmd())
                    .log("process started");
            return child;
        } catch (IOException e) {
            throw new RpcException(ConnectCode.INTERNAL, "error starting process: " + e.getMessage(), e);
        }
    }

    private ChildProcess startPiped(LaunchSpec spec, List<String> command) throws IOException {
        // until the native launcher is prepared, processes start through the JDK: an early Start does not wait for it
        Optional<NativeSpawn> fast = spec.stdin() ? Optional.empty() : nativeSpawn.getNow(Optional.empty());
        if (fast.isPresent()) {
            Process process = startNative(fast.get(), spec, command);
            return new ChildProcess(
                    ChildProcess.Kind.PIPES,
                    process,
                    fast.get().readers(),
                    spec.config(),
                    spec.tag(),
                    false,
                    signals,
                    journal,
                    clock);
        }
        List<String> argv = new ArrayList<>();
        setsid.ifPresent(p -> argv.add(p.toString()));
        argv.addAll(withPrivilegeDrop(spec.user(), command));
        ProcessBuilder builder = new ProcessBuilder(argv).directory(spec.cwd().toFile());
        builder.environment().clear();
        builder.environment().putAll(spec.env());
        if (!spec.stdin()) {
            builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        Process process = builder.start();
        return new ChildProcess(
                ChildProcess.Kind.PIPES,
                process,
                VIRTUAL_READERS,
                spec.config(),
                spec.tag(),
                spec.stdin(),
                signals,
                journal,
                clock);
    }

    /**
     * Starts natively: as envd's own user directly; as another user through the credential switch (no helper program),
     * or with {@code setpriv} in front where there is none (envd not root) or it was retired.
     */
    private Process startNative(NativeSpawn spawn, LaunchSpec spec, List<String> command) throws IOException {
        UserAccount user = spec.user();
        if (user.uid() != envdUid && envdUid == 0 && spawn.switchesUsers()) {
            try {
                return spawn.startAs(
                        new CredentialSwitch.Target(user.uid(), user.gid(), user.groups()),
                        command,
                        spec.env(),
                        spec.cwd());
            } catch (CredentialSwitch.Unavailable e) {
                log.atWarn()
                        .addKeyValue("user", user.name())
                        .addKeyValue("cause", e.getMessage())
                        .log("credential switch unavailable: starting through setpriv");
            }
        }
        return spawn.start(withPrivilegeDrop(user, command), spec.env(), spec.cwd());
    }

    private List<String> withPrivilegeDrop(UserAccount user, List<String> command) {
        List<String> argv = new ArrayList<>(privilegeDrop(user));
        argv.addAll(command);
        return argv;
    }

    private ChildProcess startPty(LaunchSpec spec, List<String> argv) throws IOException {
        LaunchSpec.PtySize size = spec.pty().orElseThrow();
        PtyProcess process = new PtyProcessBuilder(argv.toArray(String[]::new))
                .setEnvironment(spec.env())
                .setDirectory(spec.cwd().toString())
                .setInitialColumns(size.cols())
                .setInitialRows(size.rows())
                .setConsole(false)
                .setRedirectErrorStream(true)
                .start();
        return new ChildProcess(
                ChildProcess.Kind.PTY, process, PTY_READERS, spec.config(), spec.tag(), true, signals, journal, clock);
    }

    @Override
    public void close() {
        nativeSpawn.thenAccept(spawn -> spawn.ifPresent(NativeSpawn::close));
    }

    /** The argv prefix that makes the child run as {@code user}. */
    List<String> privilegeDrop(UserAccount user) {
        if (user.uid() == envdUid) {
            return List.of();
        }
        if (envdUid != 0) {
            throw new RpcException(
                    ConnectCode.PERMISSION_DENIED,
                    "envd does not run as root and cannot start processes as '" + user.name() + "'");
        }
        Path tool = setpriv.orElseThrow(() -> new RpcException(
                ConnectCode.FAILED_PRECONDITION,
                "setpriv (util-linux) is not installed: cannot start processes as '" + user.name() + "'"));
        String groups = user.groups().stream().map(String::valueOf).collect(Collectors.joining(","));
        return List.of(
                tool.toString(),
                "--reuid=" + user.uid(),
                "--regid=" + user.gid(),
                groups.isEmpty() ? "--clear-groups" : "--groups=" + groups,
                "--");
    }
}
