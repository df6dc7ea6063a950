package io.agentenv.sdk.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.sdk.AuthenticationException;
import io.agentenv.sdk.CreateOptions;
import io.agentenv.sdk.FileNotFoundException;
import io.agentenv.sdk.ForkOptions;
import io.agentenv.sdk.ForkResult;
import io.agentenv.sdk.InvalidArgumentException;
import io.agentenv.sdk.Lifecycle;
import io.agentenv.sdk.ListOptions;
import io.agentenv.sdk.NetworkOptions;
import io.agentenv.sdk.NetworkUpdate;
import io.agentenv.sdk.NotEnoughSpaceException;
import io.agentenv.sdk.NotFoundException;
import io.agentenv.sdk.OnTimeout;
import io.agentenv.sdk.RateLimitException;
import io.agentenv.sdk.Sandbox;
import io.agentenv.sdk.SandboxConfig;
import io.agentenv.sdk.SandboxInfo;
import io.agentenv.sdk.SandboxMetrics;
import io.agentenv.sdk.SandboxNotFoundException;
import io.agentenv.sdk.SandboxState;
import io.agentenv.sdk.SnapshotInfo;
import io.agentenv.sdk.SnapshotListOptions;
import io.agentenv.sdk.TemplateInfo;
import io.agentenv.sdk.Templates;
import io.agentenv.sdk.TimeoutException;
import io.agentenv.sdk.UrlOptions;
import io.agentenv.sdk.commands.CommandExitException;
import io.agentenv.sdk.commands.CommandHandle;
import io.agentenv.sdk.commands.CommandResult;
import io.agentenv.sdk.commands.ProcessInfo;
import io.agentenv.sdk.commands.PtyOptions;
import io.agentenv.sdk.commands.PtySize;
import io.agentenv.sdk.commands.RunOptions;
import io.agentenv.sdk.files.EntryInfo;
import io.agentenv.sdk.files.FileType;
import io.agentenv.sdk.files.FilesystemEvent;
import io.agentenv.sdk.files.FilesystemEventType;
import io.agentenv.sdk.files.WatchHandle;
import io.agentenv.sdk.files.WatchOptions;
import io.agentenv.sdk.files.WriteEntry;
import io.agentenv.sdk.files.WriteInfo;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The SDK against the real server with the container backend (one server for the whole suite, see
 * {@link SuiteServer}). Most scenarios share one sandbox; those that pause, snapshot or fork make their own and kill
 * them. At the end no sandbox may be left, and the server may leave nothing on the host.
 */
@Tag("host")
@ExtendWith(SuiteServer.class)
class SandboxSuiteIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static Sandbox sandbox;

    @BeforeAll
    static void createSharedSandbox() {
        sandbox = Sandbox.create(
                CreateOptions.builder()
                        .metadata("suite", "java-sdk")
                        .env("SUITE_VAR", "from-create")
                        .timeout(Duration.ofMinutes(10))
                        .build(),
                SuiteServer.config());
    }

    @AfterAll
    static void nothingLeft() {
        if (!SuiteServer.running()) {
            return; // its start failed, and said why
        }
        if (sandbox != null) {
            assertThat(sandbox.kill()).isTrue();
            assertThat(sandbox.kill()).as("a second kill finds nothing").isFalse();
        }
        assertThat(Sandbox.list(ListOptions.all(), SuiteServer.config()).all())
                .as("sandboxes left by the suite")
                .isEmpty();
    }

    static SandboxConfig config() {
        return SuiteServer.config();
    }

    /** Waits (bounded) for a condition that the scenario makes true; fails naming it otherwise. */
    static void await(String what, BooleanSupplier condition) {
        Instant deadline = Instant.now().plus(WAIT);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("gave up waiting for " + what);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    @Nested
    class Lifecycles {
        @Test
        void infoListTimeoutMetricsConnectAndTemplates() {
            SandboxInfo info = sandbox.getInfo();
            assertThat(info.sandboxId()).isEqualTo(sandbox.sandboxId());
            assertThat(info.state()).isEqualTo(SandboxState.RUNNING);
            assertThat(info.metadata()).containsEntry("suite", "java-sdk");
            assertThat(info.cpuCount()).isPositive();
            assertThat(info.memoryMB()).isEqualTo(512);
            assertThat(info.envdVersion()).isNotEmpty();
            assertThat(sandbox.isRunning()).isTrue();

            List<SandboxInfo> listed = Sandbox.list(
                            ListOptions.builder()
                                    .metadata("suite", "java-sdk")
                                    .states(SandboxState.RUNNING)
                                    .build(),
                            config())
                    .all();
            assertThat(listed).extracting(SandboxInfo::sandboxId).contains(sandbox.sandboxId());
            assertThat(Sandbox.list(
                                    ListOptions.builder()
                                            .metadata("suite", "someone-else")
                                            .build(),
                                    config())
                            .all())
                    .isEmpty();

            sandbox.setTimeout(Duration.ofMinutes(20));
            assertThat(sandbox.getInfo().endAt()).isAfter(info.endAt());

            await("a metrics sample", () -> !sandbox.getMetrics().isEmpty());
            SandboxMetrics sample = sandbox.getMetrics().get(0);
            assertThat(sample.memTotal()).isPositive();
            assertThat(sample.diskTotal()).isPositive();
            assertThat(sandbox.getMetrics(
                            info.startedAt().minusSeconds(60), Instant.now().plusSeconds(60)))
                    .isNotEmpty();

            Sandbox same = Sandbox.connect(sandbox.sandboxId(), config());
            assertThat(same.sandboxId()).isEqualTo(sandbox.sandboxId());
            assertThat(same.commands().run("echo $SUITE_VAR").stdout()).isEqualTo("from-create\n");

            List<TemplateInfo> templates = Templates.list(config());
            assertThat(templates).anySatisfy(t -> assertThat(t.names()).contains("base"));
            TemplateInfo base = Templates.get("base", config());
            assertThat(base.names()).contains("base");
            assertThat(base.envdVersion()).isNotEmpty();
        }

        @Test
        void pauseAndResumeKeepARunningProcessAndTheTimeoutPausesWhenAskedTo() {
            try (Sandbox paused = Sandbox.create(
                    CreateOptions.builder()
                            .timeout(Duration.ofMinutes(5))
                            .lifecycle(Lifecycle.pause(true))
                            .network(NetworkOptions.egress(List.of("10.1.2.3"), List.of("0.0.0.0/0")))
                            .build(),
                    config())) {
                SandboxInfo info = paused.getInfo();
                assertThat(info.lifecycle()).hasValueSatisfying(l -> {
                    assertThat(l.onTimeout()).isEqualTo(OnTimeout.PAUSE);
                    assertThat(l.autoResume()).contains(false);
                });
                assertThat(info.denyOut()).contains("0.0.0.0/0");
                assertThat(info.allowOut()).contains("10.1.2.3");

                // two sandboxes now (this one and the shared one): a page of one has a next page
                io.agentenv.sdk.Paginator<SandboxInfo> pages =
                        Sandbox.list(ListOptions.builder().limit(1).build(), config());
                assertThat(pages.nextItems()).hasSize(1);
                assertThat(pages.hasNext()).isTrue();
                assertThat(pages.all()).isNotEmpty();

                CommandHandle counter = paused.commands()
                        .start(
                                "i=0; while true; do i=$((i+1)); echo $i > /tmp/counter.new; mv /tmp/counter.new /tmp/counter; sleep 0.1; done",
                                RunOptions.builder()
                                        .timeout(Duration.ZERO)
                                        .tag("counter")
                                        .build()); // each value renamed into place
                await("the counter to count", () -> paused.files().exists("/tmp/counter"));

                assertThat(paused.pause()).isTrue();
                assertThat(paused.pause()).as("already paused").isFalse();
                assertThat(paused.getInfo().state()).isEqualTo(SandboxState.PAUSED);
                assertThat(paused.isRunning()).isFalse();
                assertThat(Sandbox.list(
                                        ListOptions.builder()
                                                .states(SandboxState.PAUSED)
                                                .build(),
                                        config())
                                .all())
                        .extracting(SandboxInfo::sandboxId)
                        .contains(paused.sandboxId());
                assertThatThrownBy(counter::waitFor)
                        .as("the pause cut the stream")
                        .isInstanceOf(TimeoutException.class);

                paused.connect();
                assertThat(paused.isRunning()).isTrue();
                assertThat(paused.commands().list()).anySatisfy(p -> {
                    assertThat(p.pid()).isEqualTo(counter.pid());
                    assertThat(p.tag()).contains("counter");
                });
                int before =
                        Integer.parseInt(paused.files().read("/tmp/counter").strip());
                await(
                        "the resumed counter to go on",
                        () -> Integer.parseInt(
                                        paused.files().read("/tmp/counter").strip())
                                > before);

                // the timeout pauses it (onTimeout PAUSE); connect resumes it again
                paused.setTimeout(Duration.ofSeconds(1));
                await("the timeout to pause it", () -> paused.getInfo().state() == SandboxState.PAUSED);
                Sandbox again = Sandbox.connect(paused.sandboxId(), Optional.of(Duration.ofMinutes(5)), config());
                assertThat(again.commands().list()).extracting(ProcessInfo::pid).contains(counter.pid());
                assertThat(again.commands().kill(counter.pid())).isTrue();

                // a filesystem-only pause keeps files, not processes
                paused.files().write("/home/user/kept.txt", "kept");
                assertThat(paused.pause(false)).isTrue();
                paused.connect();
                assertThat(paused.files().read("/home/user/kept.txt")).isEqualTo("kept");
            }
        }

        @Test
        void trafficResumesASandboxCreatedWithAutoResume() {
            try (Sandbox auto = Sandbox.create(
                    CreateOptions.builder()
                            .lifecycle(Lifecycle.pause().withAutoResume(true))
                            .build(),
                    config())) {
                assertThat(auto.getInfo().lifecycle())
                        .hasValueSatisfying(l -> assertThat(l.autoResume()).contains(true));
                auto.files().write("/home/user/before.txt", "before the pause");
                assertThat(auto.pause()).isTrue();
                assertThat(auto.getInfo().state()).isEqualTo(SandboxState.PAUSED);
                assertThat(auto.files().read("/home/user/before.txt")).isEqualTo("before the pause");
                assertThat(auto.getInfo().state()).isEqualTo(SandboxState.RUNNING);
            }
        }

        @Test
        void networkUpdatesReplaceTheEgressPolicy() {
            sandbox.updateNetwork(NetworkUpdate.of(List.of("10.9.9.9"), List.of("0.0.0.0/0")));
            SandboxInfo info = sandbox.getInfo();
            assertThat(info.denyOut()).containsExactly("0.0.0.0/0");
            assertThat(info.allowOut()).containsExactly("10.9.9.9");
            sandbox.updateNetwork(NetworkUpdate.of(List.of(), List.of()));
            assertThat(sandbox.getInfo().denyOut()).isEmpty();
        }

        @Test
        void asyncVariantsComplete() throws Exception {
            Sandbox created = Sandbox.createAsync(
                            CreateOptions.builder().metadata("async", "yes").build(), config())
                    .get(120, TimeUnit.SECONDS);
            assertThat(created.getHost(8000)).startsWith("8000-" + created.sandboxId() + ".");
            assertThat(created.pauseAsync().get(120, TimeUnit.SECONDS)).isTrue();
            assertThat(created.killAsync().get(60, TimeUnit.SECONDS)).isTrue();

            Sandbox same = Sandbox.connectAsync(sandbox.sandboxId(), Optional.empty(), config())
                    .get(60, TimeUnit.SECONDS);
            CommandResult result = same.commands().runAsync("echo async").get(60, TimeUnit.SECONDS);
            assertThat(result.stdout()).isEqualTo("async\n");
            assertThat(same.files()
                            .writeAsync("/tmp/async.txt", "a".getBytes(StandardCharsets.UTF_8))
                            .get(60, TimeUnit.SECONDS)
                            .path())
                    .isEqualTo("/tmp/async.txt");
            assertThat(same.files().readAsync("/tmp/async.txt").get(60, TimeUnit.SECONDS))
                    .isEqualTo("a");
        }
    }

    @Nested
    class Commands {
        @Test
        void foregroundRunsDeliverStdoutAndStderrToCallbacks() {
            List<String> out = new CopyOnWriteArrayList<>();
            List<String> err = new CopyOnWriteArrayList<>();
            CommandResult result = sandbox.commands()
                    .run(
                            "echo out-$X; echo err >&2; pwd",
                            RunOptions.builder()
                                    .env("X", "1")
                                    .cwd("/tmp")
                                    .onStdout(out::add)
                                    .onStderr(err::add)
                                    .build());
            assertThat(result.exitCode()).isZero();
            assertThat(result.stdout()).isEqualTo("out-1\n/tmp\n");
            assertThat(result.stderr()).isEqualTo("err\n");
            assertThat(String.join("", out)).isEqualTo(result.stdout());
            assertThat(String.join("", err)).isEqualTo("err\n");
            assertThat(sandbox.commands().run("echo ${X:-unset}").stdout())
                    .as("per-command envs do not stay")
                    .isEqualTo("unset\n");
            assertThat(sandbox.commands().run("whoami").stdout()).isEqualTo("user\n");
            assertThat(sandbox.commands()
                            .run("whoami", RunOptions.builder().user("root").build())
                            .stdout())
                    .isEqualTo("root\n");
        }

        @Test
        void aLongCommandStreamsItsOutputInOrder() {
            List<String> chunks = new CopyOnWriteArrayList<>();
            CommandResult result = sandbox.commands()
                    .run(
                            "for i in $(seq 1 300); do echo line $i; sleep 0.005; done",
                            RunOptions.builder().onStdout(chunks::add).build());
            String expected = java.util.stream.IntStream.rangeClosed(1, 300)
                    .mapToObj(i -> "line " + i + "\n")
                    .collect(Collectors.joining());
            assertThat(result.stdout()).isEqualTo(expected);
            assertThat(String.join("", chunks)).isEqualTo(expected);
        }

        @Test
        void outputArrivesWhileTheCommandStillRunsAndStdinReachesIt() {
            List<String> out = new CopyOnWriteArrayList<>();
            CommandHandle handle = sandbox.commands()
                    .start(
                            "echo ready; read line; echo got $line; cat",
                            RunOptions.builder().stdin(true).onStdout(out::add).build());
            // it cannot end before it reads stdin, so "ready" arrived while it ran
            await("the first line", () -> String.join("", out).contains("ready\n"));
            assertThat(handle.result()).isEmpty();
            handle.sendStdin("hello\n");
            handle.sendStdin("rest".getBytes(StandardCharsets.UTF_8));
            handle.closeStdin();
            CommandResult result = handle.waitFor();
            assertThat(result.stdout()).isEqualTo("ready\ngot hello\nrest");
        }

        @Test
        void backgroundCommandsAreListedReachableAndKillable() {
            CommandHandle sleeper = sandbox.commands()
                    .start(
                            "echo started; sleep 600",
                            RunOptions.builder()
                                    .timeout(Duration.ZERO)
                                    .tag("sleeper")
                                    .build());
            assertThat(sandbox.commands().list()).anySatisfy(p -> {
                assertThat(p.pid()).isEqualTo(sleeper.pid());
                assertThat(p.cmd()).isEqualTo("/bin/bash");
                assertThat(p.args()).contains("echo started; sleep 600");
                assertThat(p.tag()).contains("sleeper");
            });
            CommandHandle attached = sandbox.commands().connect(sleeper.pid());
            assertThat(attached.pid()).isEqualTo(sleeper.pid());
            assertThat(sandbox.commands().kill(sleeper.pid())).isTrue();
            assertThatThrownBy(sleeper::waitFor)
                    .isInstanceOfSatisfying(
                            CommandExitException.class,
                            e -> assertThat(e.stdout()).isEqualTo("started\n"));
            assertThatThrownBy(attached::waitFor).isInstanceOf(CommandExitException.class);
            assertThat(sandbox.commands().kill(sleeper.pid()))
                    .as("already gone")
                    .isFalse();
        }

        @Test
        void aReconnectedHandleGetsTheOutputFromThenOn() {
            List<String> first = new CopyOnWriteArrayList<>();
            CommandHandle handle = sandbox.commands()
                    .start(
                            "echo one; read x; echo two",
                            RunOptions.builder()
                                    .stdin(true)
                                    .onStdout(first::add)
                                    .build());
            await("the first line", () -> String.join("", first).contains("one"));
            handle.disconnect();
            List<String> second = new CopyOnWriteArrayList<>();
            CommandHandle again = sandbox.commands()
                    .connect(
                            handle.pid(),
                            RunOptions.builder().onStdout(second::add).build());
            sandbox.commands().sendStdin(handle.pid(), "go\n");
            CommandResult result = again.waitFor();
            assertThat(result.stdout()).isEqualTo("two\n");
            assertThat(String.join("", second)).isEqualTo("two\n");
            assertThatThrownBy(handle::waitFor)
                    .isInstanceOf(io.agentenv.sdk.SandboxException.class)
                    .hasMessageContaining("disconnected");
        }

        @Test
        void exitCodesAndTimeoutsAreTypedFailures() {
            assertThatThrownBy(() -> sandbox.commands().run("echo partial; echo bad >&2; exit 3"))
                    .isInstanceOfSatisfying(CommandExitException.class, e -> {
                        assertThat(e.exitCode()).isEqualTo(3);
                        assertThat(e.stdout()).isEqualTo("partial\n");
                        assertThat(e.stderr()).isEqualTo("bad\n");
                    });
            assertThatThrownBy(() -> sandbox.commands()
                            .run(
                                    "sleep 30; echo never",
                                    RunOptions.builder()
                                            .timeout(Duration.ofSeconds(1))
                                            .tag("too-slow")
                                            .build()))
                    .isInstanceOf(TimeoutException.class);
            await(
                    "envd to end the timed-out command",
                    () -> sandbox.commands().list().stream()
                            .noneMatch(p -> p.tag().equals(Optional.of("too-slow"))));
        }
    }

    @Nested
    class Terminals {
        @Test
        void aPtySessionTakesInputResizesAndEnds() throws Exception {
            ByteArrayOutputStream screen = new ByteArrayOutputStream();
            CommandHandle pty = sandbox.pty()
                    .create(PtyOptions.builder(80, 24)
                            .timeout(Duration.ZERO)
                            .onData(bytes -> {
                                synchronized (screen) {
                                    screen.writeBytes(bytes);
                                }
                            })
                            .build());
            java.util.function.Supplier<String> text = () -> {
                synchronized (screen) {
                    return screen.toString(StandardCharsets.UTF_8);
                }
            };
            sandbox.pty().sendInput(pty.pid(), "echo $((6*7)) $TERM\n".getBytes(StandardCharsets.UTF_8));
            await("the shell's answer", () -> text.get().contains("42 xterm-256color"));
            sandbox.pty().resize(pty.pid(), new PtySize(100, 30));
            sandbox.pty().sendInput(pty.pid(), "stty size\n".getBytes(StandardCharsets.UTF_8));
            await("the new size", () -> text.get().contains("30 100"));
            assertThat(sandbox.commands().list()).extracting(ProcessInfo::pid).contains(pty.pid());

            // detach, attach again: the session goes on and its new output reaches the new handle
            pty.disconnect();
            ByteArrayOutputStream later = new ByteArrayOutputStream();
            CommandHandle again = sandbox.pty()
                    .connect(
                            pty.pid(),
                            bytes -> {
                                synchronized (later) {
                                    later.writeBytes(bytes);
                                }
                            },
                            Duration.ZERO);
            sandbox.pty().sendInput(pty.pid(), "echo again-$((1+1))\n".getBytes(StandardCharsets.UTF_8));
            await("output on the new handle", () -> {
                synchronized (later) {
                    return later.toString(StandardCharsets.UTF_8).contains("again-2");
                }
            });
            assertThat(sandbox.pty().kill(pty.pid())).isTrue();
            assertThat(again.onExit()
                            .handle((r, e) -> r != null ? r.exitCode() : -1)
                            .get(60, TimeUnit.SECONDS))
                    .isNotZero();
            assertThat(pty.onExit()
                            .handle((r, e) -> r != null ? r.exitCode() : -1)
                            .get(60, TimeUnit.SECONDS))
                    .isNotZero();
        }
    }

    @Nested
    class Filesystem {
        private final String dir = "/tmp/files-" + UUID.randomUUID();

        @Test
        void readAndWriteTextBytesAndStreams() throws Exception {
            WriteInfo written = sandbox.files().write(dir + "/a.txt", "héllo");
            assertThat(written.path()).isEqualTo(dir + "/a.txt");
            assertThat(written.name()).isEqualTo("a.txt");
            assertThat(sandbox.files().read(dir + "/a.txt")).isEqualTo("héllo");

            byte[] bytes = new byte[256];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) i;
            }
            sandbox.files().write(dir + "/b.bin", bytes);
            assertThat(sandbox.files().readBytes(dir + "/b.bin")).isEqualTo(bytes);

            byte[] big = new byte[3 << 20];
            new Random(7).nextBytes(big);
            sandbox.files().write(dir + "/big.bin", new ByteArrayInputStream(big));
            try (InputStream in = sandbox.files().readStream(dir + "/big.bin")) {
                assertThat(in.readAllBytes()).isEqualTo(big);
            }

            List<WriteInfo> many = sandbox.files()
                    .write(List.of(WriteEntry.of(dir + "/m/one.txt", "1"), WriteEntry.of(dir + "/m/two.txt", "2")));
            assertThat(many)
                    .extracting(WriteInfo::path)
                    .containsExactlyInAnyOrder(dir + "/m/one.txt", dir + "/m/two.txt");
            assertThat(sandbox.files().read(dir + "/m/two.txt")).isEqualTo("2");

            sandbox.files().withUser("root").write("/root/owned-by-root.txt", "r");
            assertThat(sandbox.files()
                            .withUser("root")
                            .getInfo("/root/owned-by-root.txt")
                            .owner())
                    .isEqualTo("root");
            sandbox.files().withUser("root").remove("/root/owned-by-root.txt");
        }

        @Test
        void listStatMakeDirRenameAndRemove() {
            assertThat(sandbox.files().makeDir(dir + "/x/y")).isTrue();
            assertThat(sandbox.files().makeDir(dir + "/x/y"))
                    .as("already there")
                    .isFalse();
            sandbox.files().write(dir + "/x/y/f.txt", "data");
            assertThat(sandbox.files().list(dir)).extracting(EntryInfo::name).containsExactly("x");
            assertThat(sandbox.files().list(dir, 3))
                    .extracting(EntryInfo::path)
                    .containsExactlyInAnyOrder(dir + "/x", dir + "/x/y", dir + "/x/y/f.txt");
            EntryInfo info = sandbox.files().getInfo(dir + "/x/y/f.txt");
            assertThat(info.type()).isEqualTo(FileType.FILE);
            assertThat(info.size()).isEqualTo(4);
            assertThat(info.owner()).isEqualTo("user");
            assertThat(sandbox.files().getInfo(dir + "/x").type()).isEqualTo(FileType.DIR);
            assertThat(sandbox.files().exists(dir + "/x/y/f.txt")).isTrue();

            EntryInfo moved = sandbox.files().rename(dir + "/x/y/f.txt", dir + "/g.txt");
            assertThat(moved.path()).isEqualTo(dir + "/g.txt");
            assertThat(sandbox.files().exists(dir + "/x/y/f.txt")).isFalse();
            sandbox.files().remove(dir);
            assertThat(sandbox.files().exists(dir)).isFalse();
        }

        @Test
        void watchDirReportsChangesUntilStopped() throws Exception {
            sandbox.files().makeDir(dir + "/watched");
            List<FilesystemEvent> events = new CopyOnWriteArrayList<>();
            List<Optional<Throwable>> exits = new CopyOnWriteArrayList<>();
            WatchHandle watch = sandbox.files()
                    .watchDir(
                            dir + "/watched",
                            events::add,
                            WatchOptions.builder()
                                    .recursive(true)
                                    .includeEntry(true)
                                    .timeout(Duration.ZERO)
                                    .onExit(exits::add)
                                    .build());
            java.util.function.BiPredicate<FilesystemEventType, String> seen = (type, name) ->
                    events.stream().anyMatch(e -> e.type() == type && e.name().equals(name));
            try {
                sandbox.files().write(dir + "/watched/new.txt", "x");
                await("CREATE new.txt in " + events, () -> seen.test(FilesystemEventType.CREATE, "new.txt"));
                sandbox.files().makeDir(dir + "/watched/sub");
                await("CREATE sub in " + events, () -> seen.test(FilesystemEventType.CREATE, "sub"));
                sandbox.files().write(dir + "/watched/sub/deep.txt", "y");
                await(
                        "an event for sub/deep.txt in " + events,
                        () -> events.stream().anyMatch(e -> e.name().equals("sub/deep.txt")));
                sandbox.files().remove(dir + "/watched/new.txt");
                await("REMOVE new.txt in " + events, () -> seen.test(FilesystemEventType.REMOVE, "new.txt"));
                assertThat(events)
                        .filteredOn(e -> e.type() == FilesystemEventType.CREATE
                                && e.name().equals("new.txt"))
                        .allSatisfy(e -> assertThat(e.entry())
                                .hasValueSatisfying(en -> assertThat(en.path()).isEqualTo(dir + "/watched/new.txt")));
            } finally {
                watch.stop();
            }
            watch.onExit().get(60, TimeUnit.SECONDS);
            assertThat(exits).containsExactly(Optional.empty());

            List<Optional<Throwable>> timedOut = new CopyOnWriteArrayList<>();
            WatchHandle shortWatch = sandbox.files()
                    .watchDir(
                            dir + "/watched",
                            e -> {},
                            WatchOptions.builder()
                                    .timeout(Duration.ofMillis(500))
                                    .onExit(timedOut::add)
                                    .build());
            assertThatThrownBy(() -> shortWatch.onExit().get(60, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(TimeoutException.class);
            assertThat(timedOut)
                    .singleElement()
                    .satisfies(t -> assertThat(t).containsInstanceOf(TimeoutException.class));

            assertThatThrownBy(() -> sandbox.files().watchDir(dir + "/missing", e -> {}))
                    .isInstanceOf(FileNotFoundException.class);
            sandbox.files().write(dir + "/plain.txt", "p");
            assertThatThrownBy(() -> sandbox.files().watchDir(dir + "/plain.txt", e -> {}))
                    .isInstanceOf(io.agentenv.sdk.SandboxException.class);
            sandbox.files().remove(dir);
        }

        @Test
        void signedUrlsWorkWithoutAnyHeaders() throws Exception {
            HttpClient plain =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String path = dir + "/signed.txt";
            String upload = sandbox.uploadUrl(path, UrlOptions.defaults().withExpiration(Duration.ofMinutes(5)));
            HttpResponse<String> put = plain.send(
                    HttpRequest.newBuilder(URI.create(upload))
                            .header("Content-Type", "application/octet-stream")
                            .POST(HttpRequest.BodyPublishers.ofString("via url"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
            HttpResponse<String> get = plain.send(
                    HttpRequest.newBuilder(URI.create(sandbox.downloadUrl(path, UrlOptions.defaults())))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(get.statusCode()).isEqualTo(200);
            assertThat(get.body()).isEqualTo("via url");
            String forged = sandbox.downloadUrl(path, UrlOptions.defaults()).replace("signature=v1_", "signature=v1_x");
            assertThat(plain.send(
                                    HttpRequest.newBuilder(URI.create(forged))
                                            .GET()
                                            .build(),
                                    HttpResponse.BodyHandlers.discarding())
                            .statusCode())
                    .isNotEqualTo(200);
            sandbox.files().remove(dir);
        }
    }

    /** On sandboxes of their own, so that nothing another scenario left running in the shared one (a watch) stops a capture. */
    @Nested
    class SnapshotsAndForks {
        @Test
        void aSnapshotCreatesSandboxesWithItsStateAndCanBeDeleted() {
            String name = "jsdk-snap-" + UUID.randomUUID().toString().substring(0, 8);
            try (Sandbox source = Sandbox.create(
                    CreateOptions.builder().env("SNAP_VAR", "kept").build(), config())) {
                source.files().write("/home/user/snapshot.txt", "in the snapshot");
                SnapshotInfo snapshot = source.createSnapshot(name);
                try {
                    assertThat(snapshot.names()).anySatisfy(n -> assertThat(n).contains(name));
                    assertThat(source.listSnapshots().all())
                            .extracting(SnapshotInfo::snapshotId)
                            .contains(snapshot.snapshotId());
                    assertThat(Sandbox.listSnapshots(SnapshotListOptions.all().withLimit(100), config())
                                    .all())
                            .extracting(SnapshotInfo::snapshotId)
                            .contains(snapshot.snapshotId());
                    assertThat(source.isRunning()).as("the source runs on").isTrue();
                    try (Sandbox restored = Sandbox.create(snapshot.snapshotId(), config())) {
                        assertThat(restored.sandboxId()).isNotEqualTo(source.sandboxId());
                        assertThat(restored.files().read("/home/user/snapshot.txt"))
                                .isEqualTo("in the snapshot");
                        assertThat(restored.commands().run("echo $SNAP_VAR").stdout())
                                .isEqualTo("kept\n");
                    }
                } finally {
                    assertThat(Sandbox.deleteSnapshot(snapshot.snapshotId(), config()))
                            .isTrue();
                }
                assertThat(Sandbox.deleteSnapshot(snapshot.snapshotId(), config()))
                        .as("already deleted")
                        .isFalse();
            }
        }

        @Test
        void aForkCopiesTheSandboxAndChildrenBeyondTheSlotsAreRateLimited() {
            try (Sandbox parent = Sandbox.create(CreateOptions.defaults(), config())) {
                parent.files().write("/home/user/fork.txt", "parent state");
                try (Sandbox child = parent.fork()) {
                    assertThat(child.sandboxId()).isNotEqualTo(parent.sandboxId());
                    assertThat(child.files().read("/home/user/fork.txt")).isEqualTo("parent state");
                    child.files().write("/home/user/fork.txt", "child state");
                    assertThat(parent.files().read("/home/user/fork.txt")).isEqualTo("parent state");
                }

                // more children than the server has sandbox slots (the shared sandbox and the parent hold two)
                List<ForkResult> results =
                        parent.fork(ForkOptions.of(SuiteServer.MAX_SANDBOXES, Duration.ofMinutes(2)));
                try {
                    assertThat(results).hasSize(SuiteServer.MAX_SANDBOXES);
                    assertThat(results)
                            .anySatisfy(r -> assertThat(r.error()).containsInstanceOf(RateLimitException.class));
                } finally {
                    for (ForkResult r : results) {
                        r.sandbox().ifPresent(Sandbox::kill);
                    }
                }
            }
        }
    }

    @Nested
    class Examples {
        @Test
        void theAgentToolRunsCodeAndReadsFilesInItsSandbox() {
            try (io.agentenv.sdk.examples.LangChain4jSandboxTools tools =
                    new io.agentenv.sdk.examples.LangChain4jSandboxTools(config())) {
                assertThat(tools.runPython("print(6 * 7)")).isEqualTo("exit code 0\nstdout:\n42\n");
                assertThat(tools.runPython("open('/home/user/out.txt', 'w').write('from python')\nprint('written')"))
                        .contains("written");
                assertThat(tools.readFile("/home/user/out.txt")).isEqualTo("from python");
                assertThat(tools.readFile("/home/user/none.txt")).isEqualTo("no such file: /home/user/none.txt");
                assertThat(tools.runPython("import sys\nprint('bad', file=sys.stderr)\nsys.exit(2)"))
                        .isEqualTo("exit code 2\nstderr:\nbad\n");
            }
        }
    }

    @Nested
    class Errors {
        @Test
        void aWrongApiKeyIsAnAuthenticationFailure() {
            SandboxConfig wrong = config().toBuilder().apiKey("e2b_wrong").build();
            assertThatThrownBy(() -> Sandbox.list(ListOptions.all(), wrong).nextItems())
                    .isInstanceOf(AuthenticationException.class);
            assertThatThrownBy(() -> Sandbox.create(CreateOptions.defaults(), wrong))
                    .isInstanceOf(AuthenticationException.class);
        }

        @Test
        void unknownSandboxesTemplatesAndFilesAreNotFound() {
            String missing = "jsdkmissing000000000";
            assertThatThrownBy(() -> Sandbox.getInfo(missing, config())).isInstanceOf(SandboxNotFoundException.class);
            assertThatThrownBy(() -> Sandbox.connect(missing, config())).isInstanceOf(SandboxNotFoundException.class);
            assertThatThrownBy(() -> Sandbox.setTimeout(missing, Duration.ofSeconds(30), config()))
                    .isInstanceOf(SandboxNotFoundException.class);
            assertThatThrownBy(() -> Sandbox.pause(missing, Optional.empty(), config()))
                    .isInstanceOf(SandboxNotFoundException.class);
            assertThat(Sandbox.kill(missing, config())).isFalse();
            assertThatThrownBy(() -> Templates.get("no-such-template", config()))
                    .isInstanceOf(NotFoundException.class);
            assertThatThrownBy(() -> sandbox.files().read("/no/such/file")).isInstanceOf(FileNotFoundException.class);
            assertThatThrownBy(() -> sandbox.files().getInfo("/no/such/file"))
                    .isInstanceOf(FileNotFoundException.class);
            assertThatThrownBy(() -> sandbox.commands().connect(999_999)).isInstanceOf(NotFoundException.class);
        }

        @Test
        void refusedArgumentsAreInvalidArguments() {
            assertThatThrownBy(() -> Sandbox.create("no-such-template", config()))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("no-such-template");
            assertThatThrownBy(() -> sandbox.files().list("/etc/hostname"))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> sandbox.updateNetwork(NetworkUpdate.of(List.of(), List.of("not-an-address"))))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> sandbox.commands()
                            .run(
                                    "true",
                                    RunOptions.builder().cwd("/no/such/dir").build()))
                    .isInstanceOf(io.agentenv.sdk.SandboxException.class);
        }

        @Test
        void aFullDiskIsNotEnoughSpace() {
            try {
                // fill the sandbox's disk completely, then write a small file: envd answers 507. (A small body: for a
                // large one the server may close the connection before the client has sent it all, which the
                // client can only see as a broken connection.)
                String avail = sandbox.commands()
                        .run("df -B1M --output=avail / | tail -n 1")
                        .stdout()
                        .strip();
                sandbox.commands()
                        .run("fallocate -l " + (Long.parseLong(avail) - 1) + "M /home/user/fill; "
                                + "dd if=/dev/zero of=/home/user/fill2 bs=64k 2>/dev/null; true");
                assertThatThrownBy(() -> sandbox.files().write("/home/user/too-big", new byte[64 << 10]))
                        .isInstanceOf(NotEnoughSpaceException.class);
            } finally {
                sandbox.commands().run("rm -f /home/user/fill /home/user/fill2 /home/user/too-big");
            }
            assertThat(sandbox.files()
                            .write("/home/user/fits", new byte[1 << 20])
                            .path())
                    .isEqualTo("/home/user/fits");
        }

        @Test
        void aKilledSandboxTimesOutItsCallsAndStreams() throws Exception {
            Sandbox doomed = Sandbox.create(CreateOptions.defaults(), config());
            try {
                CommandHandle running = doomed.commands()
                        .start(
                                "sleep 600",
                                RunOptions.builder().timeout(Duration.ZERO).build());
                assertThat(doomed.kill()).isTrue();
                assertThatThrownBy(running::waitFor)
                        .isInstanceOf(TimeoutException.class)
                        .hasMessageContaining("killed or reached its end of life");
                assertThat(doomed.isRunning()).isFalse();
                assertThatThrownBy(() -> doomed.commands().run("true")).isInstanceOf(SandboxNotFoundException.class);
                assertThatThrownBy(() -> doomed.files().read("/etc/hostname")).isInstanceOf(TimeoutException.class);
            } finally {
                doomed.kill();
            }
        }
    }
}
