package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.envd.connect.CallContext;
import io.agentenv.envd.connect.ConnectRouter;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.filesystem.CreateWatcherRequest;
import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.FilesystemEvent;
import io.agentenv.envd.protocol.filesystem.GetWatcherEventsRequest;
import io.agentenv.envd.protocol.filesystem.ListDirRequest;
import io.agentenv.envd.protocol.filesystem.MakeDirRequest;
import io.agentenv.envd.protocol.filesystem.MoveRequest;
import io.agentenv.envd.protocol.filesystem.RemoveRequest;
import io.agentenv.envd.protocol.filesystem.RemoveWatcherRequest;
import io.agentenv.envd.protocol.filesystem.StatRequest;
import io.agentenv.envd.protocol.filesystem.WatchDirRequest;
import io.agentenv.envd.protocol.filesystem.WatchDirResponse;
import io.agentenv.envd.session.InitRequest;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.users.Accounts;
import io.agentenv.envd.users.UserDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The filesystem.Filesystem handlers, called as the router calls them, for user "user" whose home is a temp dir. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class FilesystemRpcTest {
    @TempDir
    Path temp;

    private Path home;
    private Session session;
    private final WatchHub hub = new WatchHub();
    private Watchers watchers;
    private FilesystemRpc rpc;

    @BeforeEach
    void setUp() throws IOException {
        home = Files.createDirectory(temp.resolve("home"));
        Path passwd = Files.writeString(
                temp.resolve("passwd"),
                "root:x:0:0:root:/root:/bin/bash\nuser:x:65534:65534:user:" + home + ":/bin/bash\n"
                        + "other:x:65533:65533:other:" + temp.resolve("other") + ":/bin/bash\n");
        Path group = Files.writeString(temp.resolve("group"), "root:x:0:\nuser:x:65534:\nother:x:65533:\n");
        session = new Session(Clock.systemUTC());
        watchers = new Watchers(hub, 10, 1000);
        rpc = new FilesystemRpc(
                new LocalFilesystem(),
                hub,
                watchers,
                new Accounts(new UserDirectory(passwd, group), session::defaultUser, "user"),
                session);
    }

    @AfterEach
    void tearDown() {
        watchers.close();
        hub.close();
    }

    private static CallContext call(Optional<String> user, Optional<Instant> deadline, Duration keepalive) {
        return new CallContext("filesystem.Filesystem/X", WireFormat.JSON, user, deadline, keepalive, name -> null);
    }

    private static CallContext call() {
        return call(Optional.empty(), Optional.empty(), Duration.ofSeconds(90));
    }

    private static ConnectCode codeOf(Runnable call) {
        try {
            call.run();
        } catch (RpcException e) {
            return e.code();
        }
        throw new AssertionError("expected an RpcException");
    }

    @Test
    void all_nine_procedures_are_registered_under_e2bs_names() {
        ConnectRouter router = new ConnectRouter();
        rpc.register(router);

        for (String method : List.of(
                "Stat",
                "ListDir",
                "MakeDir",
                "Move",
                "Remove",
                "WatchDir",
                "CreateWatcher",
                "GetWatcherEvents",
                "RemoveWatcher")) {
            assertThat(router.find("/filesystem.Filesystem/" + method))
                    .as(method)
                    .isPresent();
        }
    }

    @Test
    void stat_resolves_relative_paths_against_the_home_and_fills_every_field() throws IOException {
        Files.writeString(home.resolve("a.txt"), "hello");

        EntryInfo entry = rpc.stat(StatRequest.newBuilder().setPath("a.txt").build(), call())
                .getEntry();

        assertThat(entry.getPath()).isEqualTo(home.resolve("a.txt").toString());
        assertThat(entry.getName()).isEqualTo("a.txt");
        assertThat(entry.getType()).isEqualTo(io.agentenv.envd.protocol.filesystem.FileType.FILE_TYPE_FILE);
        assertThat(entry.getSize()).isEqualTo(5);
        assertThat(entry.getPermissions()).startsWith("-rw");
        assertThat(entry.getOwner()).isEqualTo("root");
        assertThat(entry.getModifiedTime().getSeconds()).isPositive();
        assertThat(entry.hasSymlinkTarget()).isFalse();
    }

    @Test
    void relative_paths_resolve_against_home_the_default_workdir_is_only_the_empty_path() throws IOException {
        Path workdir = Files.createDirectory(temp.resolve("work"));
        Files.writeString(workdir.resolve("w.txt"), "");
        Files.writeString(home.resolve("h.txt"), "");
        session.init(new InitRequest(
                Optional.empty(), Map.of(), Optional.empty(), Optional.of(workdir.toString()), Optional.empty()));

        assertThat(rpc.stat(StatRequest.newBuilder().setPath("h.txt").build(), call())
                        .getEntry()
                        .getPath())
                .isEqualTo(home.resolve("h.txt").toString());
        assertThat(rpc.stat(StatRequest.newBuilder().setPath("~/h.txt").build(), call())
                        .getEntry()
                        .getPath())
                .isEqualTo(home.resolve("h.txt").toString());
        assertThat(rpc.stat(StatRequest.newBuilder().setPath("").build(), call())
                        .getEntry()
                        .getPath())
                .isEqualTo(workdir.toString());
        assertThat(codeOf(
                        () -> rpc.stat(StatRequest.newBuilder().setPath("w.txt").build(), call())))
                .isEqualTo(ConnectCode.NOT_FOUND);
    }

    @Test
    void every_procedure_resolves_a_relative_path_against_the_calling_users_own_home() throws Exception {
        Path otherHome = Files.createDirectory(temp.resolve("other"));
        session.init(new InitRequest(
                Optional.empty(), Map.of(), Optional.empty(), Optional.of(home.toString()), Optional.empty()));
        CallContext asOther = call(Optional.of("other"), Optional.empty(), Duration.ofSeconds(90));

        assertThat(rpc.makeDir(MakeDirRequest.newBuilder().setPath("d").build(), asOther)
                        .getEntry()
                        .getPath())
                .isEqualTo(otherHome.resolve("d").toString());
        Files.writeString(otherHome.resolve("d/f.txt"), "x");
        assertThat(rpc.stat(StatRequest.newBuilder().setPath("d/f.txt").build(), asOther)
                        .getEntry()
                        .getPath())
                .isEqualTo(otherHome.resolve("d/f.txt").toString());
        assertThat(rpc.listDir(
                                ListDirRequest.newBuilder()
                                        .setPath("d")
                                        .setDepth(1)
                                        .build(),
                                asOther)
                        .getEntriesList())
                .extracting(EntryInfo::getPath)
                .containsExactly(otherHome.resolve("d/f.txt").toString());
        String watcher = rpc.createWatcher(
                        CreateWatcherRequest.newBuilder().setPath("d").build(), asOther)
                .getWatcherId();
        rpc.removeWatcher(
                RemoveWatcherRequest.newBuilder().setWatcherId(watcher).build(), asOther);
        assertThat(rpc.move(
                                MoveRequest.newBuilder()
                                        .setSource("d/f.txt")
                                        .setDestination("g.txt")
                                        .build(),
                                asOther)
                        .getEntry()
                        .getPath())
                .isEqualTo(otherHome.resolve("g.txt").toString());
        rpc.remove(RemoveRequest.newBuilder().setPath("g.txt").build(), asOther);

        assertThat(otherHome.resolve("g.txt")).doesNotExist();
        assertThat(home.resolve("d")).doesNotExist();
    }

    @Test
    void errors_carry_e2bs_connect_codes() throws IOException {
        Files.writeString(home.resolve("file"), "");

        assertThat(codeOf(() ->
                        rpc.stat(StatRequest.newBuilder().setPath("missing").build(), call())))
                .isEqualTo(ConnectCode.NOT_FOUND);
        assertThat(codeOf(() ->
                        rpc.listDir(ListDirRequest.newBuilder().setPath("file").build(), call())))
                .isEqualTo(ConnectCode.INVALID_ARGUMENT);
        assertThat(codeOf(() ->
                        rpc.makeDir(MakeDirRequest.newBuilder().setPath("~").build(), call())))
                .isEqualTo(ConnectCode.ALREADY_EXISTS);
        assertThat(codeOf(() -> rpc.move(
                        MoveRequest.newBuilder()
                                .setSource("missing")
                                .setDestination("x")
                                .build(),
                        call())))
                .isEqualTo(ConnectCode.NOT_FOUND);
        assertThat(codeOf(
                        () -> rpc.stat(StatRequest.newBuilder().setPath("a\0b").build(), call())))
                .isEqualTo(ConnectCode.INVALID_ARGUMENT);
        assertThat(codeOf(() -> rpc.stat(
                        StatRequest.newBuilder().setPath("x").build(),
                        call(Optional.of("ghost"), Optional.empty(), Duration.ofSeconds(90)))))
                .isEqualTo(ConnectCode.UNAUTHENTICATED);
        assertThat(codeOf(() -> rpc.getWatcherEvents(
                        GetWatcherEventsRequest.newBuilder().setWatcherId("w0").build(), call())))
                .isEqualTo(ConnectCode.NOT_FOUND);
    }

    @Test
    void make_dir_gives_new_directories_to_the_calling_user_and_move_returns_the_entry() throws IOException {
        EntryInfo made = rpc.makeDir(MakeDirRequest.newBuilder().setPath("x/y").build(), call())
                .getEntry();
        Files.writeString(home.resolve("x/y/f"), "data");
        EntryInfo moved = rpc.move(
                        MoveRequest.newBuilder()
                                .setSource("x/y/f")
                                .setDestination("z/g")
                                .build(),
                        call())
                .getEntry();
        rpc.remove(RemoveRequest.newBuilder().setPath("x").build(), call());

        assertThat(made.getOwner()).isEqualTo("nobody"); // uid 65534 as the system's passwd names it
        assertThat(made.getType()).isEqualTo(io.agentenv.envd.protocol.filesystem.FileType.FILE_TYPE_DIRECTORY);
        assertThat(Files.getAttribute(home.resolve("z"), "unix:uid")).isEqualTo(65534);
        assertThat(moved.getPath()).isEqualTo(home.resolve("z/g").toString());
        assertThat(moved.getSize()).isEqualTo(4);
        assertThat(home.resolve("x")).doesNotExist();
    }

    @Test
    void list_dir_of_depth_zero_lists_children_and_larger_depths_descend() throws IOException {
        Files.createDirectories(home.resolve("d/e"));
        Files.writeString(home.resolve("d/e/f"), "");

        assertThat(rpc.listDir(ListDirRequest.newBuilder().setPath("d").build(), call())
                        .getEntriesList())
                .extracting(EntryInfo::getName)
                .containsExactly("e");
        assertThat(rpc.listDir(
                                ListDirRequest.newBuilder()
                                        .setPath("d")
                                        .setDepth(2)
                                        .build(),
                                call())
                        .getEntriesList())
                .extracting(EntryInfo::getName)
                .containsExactly("e", "f");
    }

    @Test
    void watch_dir_sends_start_first_then_events_with_relative_names() throws Exception {
        Path watched = Files.createDirectory(home.resolve("watched"));
        List<WatchDirResponse> sent = new CopyOnWriteArrayList<>();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch created = new CountDownLatch(1);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<?> stream = threads.submit(() -> {
                rpc.watchDir(
                        WatchDirRequest.newBuilder().setPath("watched").build(),
                        call(Optional.empty(), Optional.empty(), Duration.ofMillis(50)),
                        message -> {
                            sent.add(message);
                            if (message.hasStart()) {
                                started.countDown();
                            }
                            if (message.hasFilesystem()
                                    && message.getFilesystem().getName().equals("new.txt")) {
                                created.countDown();
                                throw new IOException("client went away");
                            }
                        });
                return null;
            });
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            Files.writeString(watched.resolve("new.txt"), "x");
            assertThat(created.await(10, TimeUnit.SECONDS)).isTrue();
            stream.get(10, TimeUnit.SECONDS); // a gone client ends the stream quietly
        }
        assertThat(sent.getFirst().hasStart()).isTrue();
        FilesystemEvent event = sent.stream()
                .filter(WatchDirResponse::hasFilesystem)
                .findFirst()
                .orElseThrow()
                .getFilesystem();
        assertThat(event.getName()).isEqualTo("new.txt");
        assertThat(event.getType()).isEqualTo(io.agentenv.envd.protocol.filesystem.EventType.EVENT_TYPE_CREATE);
        assertThat(event.hasEntry()).isFalse();
    }

    @Test
    void an_idle_watch_sends_keepalives_and_ends_with_deadline_exceeded_at_its_timeout() {
        List<WatchDirResponse> sent = new CopyOnWriteArrayList<>();
        Instant deadline = Instant.now().plusMillis(400);

        assertThatThrownBy(() -> rpc.watchDir(
                        WatchDirRequest.newBuilder().setPath("~").build(),
                        call(Optional.empty(), Optional.of(deadline), Duration.ofMillis(100)),
                        sent::add))
                .isInstanceOfSatisfying(
                        RpcException.class, e -> assertThat(e.code()).isEqualTo(ConnectCode.DEADLINE_EXCEEDED));
        assertThat(sent.getFirst().hasStart()).isTrue();
        assertThat(sent).anyMatch(WatchDirResponse::hasKeepalive);
    }

    @Test
    void watch_dir_of_a_missing_directory_fails_before_the_start_event() {
        List<WatchDirResponse> sent = new CopyOnWriteArrayList<>();

        assertThatThrownBy(() -> rpc.watchDir(
                        WatchDirRequest.newBuilder().setPath("nope").build(), call(), sent::add))
                .isInstanceOfSatisfying(
                        RpcException.class, e -> assertThat(e.code()).isEqualTo(ConnectCode.NOT_FOUND));
        assertThat(sent).isEmpty();
    }

    @Test
    void a_polling_watcher_buffers_events_until_fetched_and_can_be_removed() throws Exception {
        String id = rpc.createWatcher(
                        CreateWatcherRequest.newBuilder()
                                .setPath("~")
                                .setIncludeEntry(true)
                                .build(),
                        call())
                .getWatcherId();
        Files.writeString(home.resolve("polled.txt"), "x");

        Instant deadline = Instant.now().plusSeconds(10);
        List<FilesystemEvent> events = List.of();
        while (events.stream().noneMatch(e -> e.getName().equals("polled.txt"))) {
            assertThat(Instant.now()).isBefore(deadline);
            events = rpc.getWatcherEvents(
                            GetWatcherEventsRequest.newBuilder()
                                    .setWatcherId(id)
                                    .build(),
                            call())
                    .getEventsList();
            Thread.onSpinWait();
        }
        rpc.removeWatcher(RemoveWatcherRequest.newBuilder().setWatcherId(id).build(), call());

        assertThat(events.getFirst().getEntry().getPath())
                .isEqualTo(home.resolve("polled.txt").toString());
        assertThat(codeOf(() -> rpc.removeWatcher(
                        RemoveWatcherRequest.newBuilder().setWatcherId(id).build(), call())))
                .isEqualTo(ConnectCode.NOT_FOUND);
    }
}
