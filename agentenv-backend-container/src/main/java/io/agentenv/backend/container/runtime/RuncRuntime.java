package io.agentenv.backend.container.runtime;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.CommandResult;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.host.MountTable;
import io.agentenv.backend.container.host.ProcessRunner;
import io.agentenv.backend.container.storage.Unmounts;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives runc (Debian's 1.1.5) for this backend's containers, with its own state root, and CRIU (the host setup's
 * build) for checkpoint and restore. Every call has a deadline; checkpoint and restore have their own, longer one.
 * "Already gone" counts as success for delete and kill.
 */
public final class RuncRuntime {
    /** How often {@link #list} is taken again when containers went while runc listed them. */
    static final int LIST_ATTEMPTS = 5;

    /** Whether the container keeps running after a checkpoint. */
    public enum AfterCheckpoint {
        LEAVE_RUNNING,
        STOP
    }

    static final String BUNDLE_LOG = "runc.log";
    public static final String BUNDLE_PIDFILE = "init.pid";
    private static final Logger log = LoggerFactory.getLogger(RuncRuntime.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern CRIU_STAMP = Pattern.compile("\\((\\d+)\\.(\\d{6})\\)");
    /**
     * Run by /bin/sh with only positional arguments (N, N cgroup dirs, then the program and its arguments; nothing is
     * interpolated into the script): moves the shell into the cgroups and execs the program in its place. runc 1.1
     * restoring on cgroup v1 without a cgroup namespace bind-mounts /sys/fs/cgroup/* inside the container from its
     * OWN /proc/self/cgroup, so it must run in the sandbox's cgroups or the sandbox would see the server's.
     */
    static final String JOIN_CGROUPS_AND_EXEC = """
            n=$1; shift
            while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; n=$((n - 1)); done
            exec "$@"
            """;

    private final ProcessRunner runner;
    private final Path runc;
    private final Path criu;
    private final Path root;
    private final Duration commandTimeout;
    private final Duration criuTimeout;
    private final CgroupTree cgroups;

    public RuncRuntime(ProcessRunner runner, HostLayout layout, Duration commandTimeout, Duration criuTimeout) {
        this.runner = requireNonNull(runner, "runner is null");
        this.runc = layout.runc();
        this.criu = layout.criu();
        this.root = layout.runcRoot();
        this.commandTimeout = requireNonNull(commandTimeout, "commandTimeout is null");
        this.criuTimeout = requireNonNull(criuTimeout, "criuTimeout is null");
        this.cgroups = new CgroupTree(layout);
    }

    /**
     * The CRIU options runc passes for this backend's containers: the host setup's (network lock) plus
     * {@code tcp-close} (connections into a sandbox are cut by a checkpoint; clients reconnect), {@code ext-unix-sk}
     * (external unix sockets of the sandbox's own programs) and {@code manage-cgroups=ignore}: runc creates every
     * sandbox's cgroups and sets their limits itself, and a restore runs CRIU inside them, so CRIU neither dumps them
     * (which mounted every v1 controller: ~19 ms of each checkpoint) nor restores them. The {@code =} matters: the
     * option's argument is optional, so {@code manage-cgroups ignore} would be read as soft mode.
     */
    public static String criuOptions(String setupOptions) {
        StringBuilder options = new StringBuilder(setupOptions.strip()).append('\n');
        for (String option : List.of("tcp-close", "ext-unix-sk", "manage-cgroups=ignore")) {
            if (!setupOptions.lines().map(String::strip).toList().contains(option)) {
                options.append(option).append('\n');
            }
        }
        return options.toString();
    }

    /** Writes the bundle's config.json. */
    public static void writeConfig(Path bundle, OciSpec spec) throws IOException {
        Files.createDirectories(bundle);
        Path tmp = bundle.resolve("config.json.tmp");
        Files.write(tmp, OciSpecs.toJson(spec));
        Files.move(
                tmp,
                bundle.resolve("config.json"),
                StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    /** Creates the container from {@code bundle/config.json}; its init waits for {@link #start}. */
    public void create(ContainerId id, Path bundle) throws CommandFailedException, InterruptedException {
        detached(
                bundle,
                commandTimeout,
                "create",
                "--bundle",
                bundle.toString(),
                "--pid-file",
                bundle.resolve(BUNDLE_PIDFILE).toString(),
                id.value());
        log.atInfo().addKeyValue("sandbox_id", id.value()).log("container created");
    }

    /**
     * Lets the created container's init exec its program. Returns once runc has signalled it: the exec may still be
     * in progress, so wait for the program to be up (e.g. envd answering) before freezing the container.
     */
    public void start(ContainerId id) throws CommandFailedException, InterruptedException {
        run(commandTimeout, "start", id.value());
    }

    /** The container's state, or empty when runc does not know it. */
    public Optional<ContainerState> state(ContainerId id) throws CommandFailedException, InterruptedException {
        try {
            return Optional.of(
                    parseState(run(commandTimeout, "state", id.value()).stdout()));
        } catch (CommandFailedException e) {
            if (isGone(e)) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * Ids of every container in this runtime's state root. {@code runc list} fails as a whole when a container's state
     * dir goes between its read of the root and its look into that dir (a kill's release deletes containers after the
     * kill's answer), so such a failure is a list taken again, at most {@value #LIST_ATTEMPTS} times.
     */
    public List<ContainerId> list() throws CommandFailedException, InterruptedException {
        String out = listJson();
        List<ContainerId> ids = new ArrayList<>();
        if (out.isEmpty() || out.equals("null")) {
            return ids;
        }
        try {
            for (JsonNode node : JSON.readTree(out)) {
                ids.add(new ContainerId(node.path("id").asText()));
            }
        } catch (IOException e) {
            throw new IllegalStateException("runc list printed something that is not JSON: " + out, e);
        }
        return ids;
    }

    /** {@code runc list}'s JSON, taken again when it failed on a container removed while it listed. */
    private String listJson() throws CommandFailedException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return run(commandTimeout, "list", "--format", "json").stdout().strip();
            } catch (CommandFailedException e) {
                if (attempt == LIST_ATTEMPTS || !removedWhileListed(e)) {
                    throw e;
                }
            }
        }
    }

    /** Sends {@code signal} (e.g. "KILL", "TERM") to every process of the container. */
    public void kill(ContainerId id, String signal) throws CommandFailedException, InterruptedException {
        try {
            run(commandTimeout, "kill", "--all", id.value(), signal);
        } catch (CommandFailedException e) {
            if (!isGone(e) && !e.stderrTail().contains("container not running")) {
                throw e;
            }
        }
    }

    /**
     * Kills whatever still runs and deletes the container and its cgroup; success when it does not exist. A state dir
     * runc does not know (no state.json: a restore interrupted before runc recorded the container) is removed too, unless
     * something is still mounted below it.
     */
    public void delete(ContainerId id) throws CommandFailedException, InterruptedException {
        try {
            run(commandTimeout, "delete", "--force", id.value());
        } catch (CommandFailedException e) {
            if (!isGone(e)) {
                throw e;
            }
            Path stateDir = root.resolve(id.value());
            try {
                if (Files.isDirectory(stateDir, LinkOption.NOFOLLOW_LINKS)) {
                    FileTrees.deleteTree(stateDir); // refuses a tree with anything still mounted below it
                }
            } catch (IOException | RuntimeException left) {
                e.addSuppressed(left);
                throw e;
            }
        }
    }

    /** Freezes every process (cgroup freezer). */
    public void pause(ContainerId id) throws CommandFailedException, InterruptedException {
        run(commandTimeout, "pause", id.value());
    }

    void resume(ContainerId id) throws CommandFailedException, InterruptedException {
        run(commandTimeout, "resume", id.value());
    }

    /** Runs a program in the running container and returns its output (a fallback path; envd is the fast one). */
    public CommandResult exec(ContainerId id, List<String> args, Duration timeout)
            throws CommandFailedException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of("exec", id.value()));
        argv.addAll(args);
        return run(timeout, argv.toArray(String[]::new));
    }

    /**
     * Dumps the container's processes with CRIU into {@code images} (its memory, open files, sockets). The network
     * namespace is left out ({@code --empty-ns}; a restore gets a new one, plumbed by the createRuntime hook);
     * filesystem changes stay in the overlay upper dir.
     */
    public void checkpoint(ContainerId id, Path images, Path work, AfterCheckpoint after)
            throws IOException, CommandFailedException, InterruptedException {
        Files.createDirectories(images);
        Files.createDirectories(work);
        List<String> args = new ArrayList<>(List.of(
                "checkpoint",
                "--empty-ns",
                "network",
                "--image-path",
                images.toString(),
                "--work-path",
                work.toString()));
        if (after == AfterCheckpoint.LEAVE_RUNNING) {
            args.add("--leave-running");
        }
        args.add(id.value());
        long started = System.nanoTime();
        try {
            runWithCriu(criuTimeout, args);
        } catch (CommandFailedException e) {
            throw RuncLogs.withCriuLog(e, work.resolve("dump.log"));
        }
        log.atInfo()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("after", after)
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .addKeyValue("criu_ms", criuMillis(work.resolve("dump.log")).orElse(-1))
                .log("container checkpointed");
    }

    /**
     * Dumps a running container's processes into {@code images} with CRIU itself, as {@code runc checkpoint} would
     * ({@link CriuDump}: same options, same images, {@code descriptors.json} included). With {@code STOP} CRIU kills
     * them, and runc's state still names the (now stopped) container until {@link #delete}, which also removes its
     * cgroups; with {@code LEAVE_RUNNING} they run on.
     */
    public void dump(ContainerId id, Path images, Path work, AfterCheckpoint after)
            throws IOException, CommandFailedException, InterruptedException {
        Files.createDirectories(images);
        Files.createDirectories(work);
        long started = System.nanoTime();
        CriuDump.Facts facts = CriuDump.read(root.resolve(id.value()).resolve("state.json"));
        Path descriptors = images.resolve(CriuDump.DESCRIPTORS);
        Files.writeString(descriptors, facts.descriptors());
        Files.setPosixFilePermissions(descriptors, PosixFilePermissions.fromString("rw-------"));
        try {
            runner.run(Command.of(criuTimeout, CriuDump.argv(criu, images, work, facts, after)));
        } catch (CommandFailedException e) {
            throw RuncLogs.withCriuLog(e, work.resolve(CriuDump.LOG));
        }
        long took = System.nanoTime() - started;
        Optional<CriuStats> stats;
        try {
            stats = CriuStats.read(work); // CRIU writes its stats into the work dir
        } catch (IOException | RuntimeException e) {
            stats = Optional.empty();
        }
        var line = log.atInfo()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("after", after)
                .addKeyValue("took_ms", took / 1_000_000)
                .addKeyValue("criu_ms", criuMillis(work.resolve(CriuDump.LOG)).orElse(-1));
        if (stats
                .isPresent()) { // CRIU's own phases (µs in its image, ms here) and pages, for bench/container/pause.mjs
            line = line.addKeyValue("criu_frozen_ms", stats.get().frozenMicros() / 1000.0)
                    .addKeyValue("criu_memdump_ms", stats.get().memdumpMicros() / 1000.0)
                    .addKeyValue("criu_memwrite_ms", stats.get().memwriteMicros() / 1000.0)
                    .addKeyValue("criu_pages_written", stats.get().pagesWritten());
        }
        line.log("container dumped");
    }

    /**
     * Restores a container from {@code images} into {@code bundle} (its config.json names the rootfs, netns and
     * cgroup, which may differ from the checkpointed container's: that is a fork), detached.
     */
    public void restore(ContainerId id, Path bundle, Path images, Path work)
            throws IOException, CommandFailedException, InterruptedException {
        Files.createDirectories(work);
        long started = System.nanoTime();
        List<Path> cgroupDirs = cgroups.prepare(id);
        List<String> argv = new ArrayList<>(
                List.of("/bin/sh", "-c", JOIN_CGROUPS_AND_EXEC, "join-cgroups", String.valueOf(cgroupDirs.size())));
        cgroupDirs.forEach(dir -> argv.add(dir.toString()));
        argv.addAll(List.of(runc.toString(), "--root", root.toString(), "--criu", criu.toString()));
        try {
            detachedArgv(
                    bundle,
                    criuTimeout,
                    argv,
                    "restore",
                    "--detach",
                    "--empty-ns",
                    "network",
                    "--bundle",
                    bundle.toString(),
                    "--image-path",
                    images.toString(),
                    "--work-path",
                    work.toString(),
                    "--pid-file",
                    bundle.resolve(BUNDLE_PIDFILE).toString(),
                    id.value());
        } catch (CommandFailedException e) {
            CommandFailedException failed = RuncLogs.withCriuLog(e, work.resolve("restore.log"));
            clearFailedRestore(id, failed);
            removeIfEmpty(cgroupDirs);
            throw failed;
        } catch (InterruptedException e) {
            unmountStateDir(id, e); // no process may run now; runc delete is the caller's rollback
            throw e;
        }
        log.atInfo()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .log("container restored");
    }

    /** runc's state root: one dir per container, named by its id. */
    public Path stateRoot() {
        return root;
    }

    /**
     * What a failed restore leaves under the container's state dir: runc 1.1 bind-mounts the bundle's rootfs at
     * {@code <state dir>/criu-root} for CRIU, and a restore that fails or is killed at its deadline can leave that mount
     * (an overlay holding the sandbox's disk and its loop device busy) and the dir itself (so the next restore under this
     * id would find it "already exists"). Unmounts everything there (lazily when busy), deletes the container with
     * {@code --force}, then removes the state dir if runc did not. Failures are added to {@code failed}, which the
     * caller throws: the caller's own rollback follows.
     */
    private void clearFailedRestore(ContainerId id, CommandFailedException failed) throws InterruptedException {
        Path stateDir = root.resolve(id.value());
        unmountStateDir(id, failed);
        try {
            delete(id);
        } catch (CommandFailedException e) {
            failed.addSuppressed(e);
        }
        try {
            if (Files.exists(stateDir, LinkOption.NOFOLLOW_LINKS)) {
                FileTrees.deleteTree(stateDir); // refuses a tree with anything still mounted below it
            }
        } catch (IOException | RuntimeException e) {
            failed.addSuppressed(e);
        }
    }

    /** Unmounts (lazily when busy) whatever is mounted under the container's state dir; failures go to {@code failed}. */
    private void unmountStateDir(ContainerId id, Exception failed) {
        try {
            for (Path mount : MountTable.mountsUnder(root.resolve(id.value()))) {
                Unmounts.Outcome outcome = Unmounts.unmountOrDetach(mount);
                log.atWarn()
                        .addKeyValue("sandbox_id", id.value())
                        .addKeyValue("mount", mount)
                        .addKeyValue("outcome", outcome)
                        .log("removed a mount a failed restore left");
            }
        } catch (IOException | RuntimeException e) {
            failed.addSuppressed(e);
        }
    }

    /** Removes the cgroups a failed restore left without tasks; one that still has some is left to the caller's cleanup. */
    private static void removeIfEmpty(List<Path> cgroupDirs) {
        for (Path dir : cgroupDirs) {
            try {
                Files.deleteIfExists(dir);
            } catch (IOException busy) {
                // still has tasks or children: reaped with the sandbox
            }
        }
    }

    private CommandResult run(Duration timeout, String... args) throws CommandFailedException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of(runc.toString(), "--root", root.toString()));
        argv.addAll(List.of(args));
        return runner.run(Command.of(timeout, argv));
    }

    private void runWithCriu(Duration timeout, List<String> args) throws CommandFailedException, InterruptedException {
        List<String> argv =
                new ArrayList<>(List.of(runc.toString(), "--root", root.toString(), "--criu", criu.toString()));
        argv.addAll(args);
        runner.run(Command.of(timeout, argv));
    }

    /**
     * create and restore hand runc's stdio to the container's init, so they must not be pipes this process waits on:
     * stdio goes to /dev/null and runc's own errors to the bundle's log, whose tail becomes the error message.
     */
    private void detached(Path bundle, Duration timeout, String... args)
            throws CommandFailedException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of(runc.toString(), "--root", root.toString()));
        detachedArgv(bundle, timeout, argv, args);
    }

    private void detachedArgv(Path bundle, Duration timeout, List<String> argv, String... args)
            throws CommandFailedException, InterruptedException {
        Path logFile = bundle.resolve(BUNDLE_LOG);
        argv.addAll(List.of("--log", logFile.toString(), "--log-format", "json"));
        argv.addAll(List.of(args));
        try {
            runner.run(Command.of(timeout, argv).discardingOutput());
        } catch (CommandFailedException e) {
            throw new CommandFailedException(e.reason(), e.argv(), e.exitCode(), RuncLogs.errorsFrom(logFile), e);
        }
    }

    /**
     * How long CRIU itself took, from its log's last timestamp ({@code (ss.uuuuuu)} since it started logging): with
     * the whole command's time it shows what runs around CRIU. Reads only the log's tail.
     */
    static OptionalLong criuMillis(Path criuLog) {
        try (SeekableByteChannel channel = Files.newByteChannel(criuLog)) {
            long size = channel.size();
            ByteBuffer tail = ByteBuffer.allocate((int) Math.min(size, 512));
            channel.position(size - tail.capacity());
            while (tail.hasRemaining() && channel.read(tail) > 0) {
                // fill
            }
            String text = new String(tail.array(), 0, tail.position(), StandardCharsets.UTF_8).strip();
            String last = text.substring(text.lastIndexOf('\n') + 1);
            Matcher stamp = CRIU_STAMP.matcher(last);
            return stamp.lookingAt()
                    ? OptionalLong.of(Long.parseLong(stamp.group(1)) * 1000 + Long.parseLong(stamp.group(2)) / 1000)
                    : OptionalLong.empty();
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    /** runc's list failed on a container dir that was there when it read the state root and is gone now. */
    private static boolean removedWhileListed(CommandFailedException e) {
        return e.reason() == CommandFailedException.Reason.EXITED_NONZERO
                && e.stderrTail().contains("no such file or directory");
    }

    private static boolean isGone(CommandFailedException e) {
        return e.reason() == CommandFailedException.Reason.EXITED_NONZERO
                && e.stderrTail().contains("does not exist");
    }

    private static ContainerState parseState(String json) {
        try {
            JsonNode node = JSON.readTree(json);
            return new ContainerState(
                    new ContainerId(node.path("id").asText()),
                    ContainerState.Status.valueOf(node.path("status").asText().toUpperCase(Locale.ROOT)),
                    node.path("pid").asLong(),
                    Path.of(node.path("bundle").asText()));
        } catch (IOException e) {
            throw new IllegalStateException("runc state printed something that is not JSON: " + json, e);
        }
    }
}
