package io.agentenv.envd.process;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The credential switch, as root: children of other users start with exactly that user's ids and groups and no
 * capabilities, the switching thread is back at envd's credentials after every start and every failure, and no other
 * thread of the process ever runs as the user.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CredentialSwitchTest {
    private static final Map<String, String> ENV = Map.of("PATH", ProcessService.DEFAULT_PATH);

    private NativeSpawn spawn;
    private Map<String, String> own;

    @BeforeEach
    void load_the_native_launcher_as_root() throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")), "switching users needs root");
        spawn = NativeSpawn.load().orElseThrow(() -> new AssertionError("glibc 2.34+ with native access is required"));
        assertThat(spawn.switchesUsers())
                .as("a root envd switches users directly")
                .isTrue();
        own = status(Path.of("/proc/self/status"));
    }

    @AfterEach
    void close_it() {
        if (spawn != null) {
            spawn.close();
        }
    }

    @Test
    void a_child_of_a_user_has_the_users_ids_exactly_its_groups_and_no_capabilities() throws Exception {
        Map<String, String> child = childStatus(new CredentialSwitch.Target(1234, 2345, List.of(2345, 3456, 4567)));

        assertThat(child.get("Uid")).isEqualTo("1234\t1234\t1234\t1234"); // real, effective, saved, filesystem
        assertThat(child.get("Gid")).isEqualTo("2345\t2345\t2345\t2345");
        assertThat(child.get("Groups")).isEqualTo("2345 3456 4567");
        assertThat(child.get("CapEff")).isEqualTo("0000000000000000");
        assertThat(child.get("CapPrm")).isEqualTo("0000000000000000");
        assertThat(child.get("CapAmb")).isEqualTo("0000000000000000");
        assertThat(child.get("CapInh"))
                .as("as envd's (the container's config: empty)")
                .isEqualTo(own.get("CapInh"));
        assertThat(child.get("CapBnd")).isEqualTo(own.get("CapBnd"));
        assertThat(child.get("NoNewPrivs")).isEqualTo(own.get("NoNewPrivs"));
    }

    @Test
    void a_user_without_supplementary_groups_gets_none_of_envds() throws Exception {
        Map<String, String> child = childStatus(new CredentialSwitch.Target(1500, 1500, List.of()));

        assertThat(child.get("Uid")).isEqualTo("1500\t1500\t1500\t1500");
        assertThat(child.get("Groups")).isEmpty();
    }

    @Test
    void the_switching_thread_is_back_at_envds_credentials_after_a_start_and_any_failure(@TempDir Path dir)
            throws Exception {
        Path closed = Files.createDirectory(
                dir.resolve("root-only"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        CredentialSwitch.Target user = new CredentialSwitch.Target(1234, 1234, List.of(1234));
        long descriptors = openDescriptors();

        childStatus(user);
        assertBackAtEnvdsCredentials();

        assertThatThrownBy(() -> spawn.startAs(user, List.of("/nonexistent/program"), ENV, Path.of("/")))
                .isInstanceOf(IOException.class)
                .hasMessage(
                        "Cannot run program \"/nonexistent/program\" as uid 1234 in \"/\": error=2, No such file or directory");
        assertBackAtEnvdsCredentials();

        assertThatThrownBy(() -> spawn.startAs(user, List.of("/bin/true"), ENV, closed))
                .isInstanceOf(IOException.class)
                .hasMessage("Cannot run program \"/bin/true\" as uid 1234 in \"" + closed
                        + "\": error=13, Permission denied");
        assertBackAtEnvdsCredentials();

        List<Integer> tooMany = IntStream.rangeClosed(1, CredentialSwitch.MAX_GROUPS + 1)
                .boxed()
                .toList();
        assertThatThrownBy(() -> spawn.startAs(
                        new CredentialSwitch.Target(1234, 1234, tooMany), List.of("/bin/true"), ENV, Path.of("/")))
                .isInstanceOf(CredentialSwitch.Refused.class)
                .hasMessage(
                        "cannot start a process as uid 1234 gid 1234 with 65537 groups: setgroups failed: Invalid argument");
        assertBackAtEnvdsCredentials();

        // at most as many as before: other threads of the test JVM may close theirs meanwhile (seen: 71 before, 51
        // after)
        assertThat(openDescriptors()).as("no descriptor left open").isLessThanOrEqualTo(descriptors);
        assertThat(childStatus(user).get("Uid")).as("the switch still works").isEqualTo("1234\t1234\t1234\t1234");
    }

    @Test
    void the_process_stays_dumpable_after_switching() throws Exception {
        int before = spawn.users().orElseThrow().dumpable();

        childStatus(new CredentialSwitch.Target(1234, 1234, List.of()));

        assertThat(before).isEqualTo(1);
        assertThat(spawn.users().orElseThrow().dumpable()).isEqualTo(1);
    }

    @Test
    void concurrent_starts_as_different_users_get_their_credentials_no_other_thread_does(@TempDir Path dir)
            throws Exception {
        int tid = spawn.users().orElseThrow().tid();
        AtomicBoolean spawning = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        AtomicInteger samples = new AtomicInteger();
        CountDownLatch sampled = new CountDownLatch(1);
        // envd's other threads: every task's credentials, and the owner of files written meanwhile
        Thread watcher = Thread.ofPlatform().name("credential-watcher").start(() -> {
            while (spawning.get() || samples.get() == 0) {
                for (Map.Entry<Integer, Map<String, String>> task : tasks().entrySet()) {
                    // switching threads may run as a user: this one in its windows, retired ones (an earlier test) for
                    // good
                    boolean switching =
                            task.getKey() == tid || task.getValue().get("Name").startsWith("envd-spawn-as-u");
                    if (!switching && !task.getValue().get("Uid").equals(own.get("Uid"))) {
                        violations.add(task.getKey() + " " + task.getValue().get("Name") + " "
                                + task.getValue().get("Uid"));
                    }
                }
                try {
                    Path written = Files.writeString(dir.resolve("file-" + samples.get()), "x");
                    if ((Integer) Files.getAttribute(written, "unix:uid") != 0) {
                        violations.add(
                                "a file written by " + Thread.currentThread().getName() + " is not root's");
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                samples.incrementAndGet();
                sampled.countDown();
            }
        });
        sampled.await(10, TimeUnit.SECONDS);
        int starts = 32;
        List<CompletableFuture<Map<String, String>>> children = new ArrayList<>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < starts; i++) {
                int uid = 2000 + i;
                int gid = 3000 + i % 5;
                children.add(CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                return childStatus(new CredentialSwitch.Target(uid, gid, List.of(gid, 4000 + uid)));
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        },
                        executor));
            }
            for (int i = 0; i < starts; i++) {
                Map<String, String> child = children.get(i).get(30, TimeUnit.SECONDS);
                int uid = 2000 + i;
                int gid = 3000 + i % 5;
                assertThat(child.get("Uid")).isEqualTo(uid + "\t" + uid + "\t" + uid + "\t" + uid);
                assertThat(child.get("Gid")).isEqualTo(gid + "\t" + gid + "\t" + gid + "\t" + gid);
                assertThat(child.get("Groups")).isEqualTo(gid + " " + (4000 + uid));
                assertThat(child.get("CapEff")).isEqualTo("0000000000000000");
                assertThat(child.get("CapPrm")).isEqualTo("0000000000000000");
            }
        } finally {
            spawning.set(false);
            watcher.join(TimeUnit.SECONDS.toMillis(10));
        }
        assertThat(samples.get()).as("the watcher sampled during the starts").isPositive();
        assertThat(violations).isEmpty();
        assertBackAtEnvdsCredentials();
    }

    @Test
    @SuppressWarnings("ThreadPriorityCheck") // yields while waiting, up to a deadline, for another thread to park
    void a_thread_that_cannot_return_is_retired_and_later_work_is_refused() throws Throwable {
        Linker linker = Linker.nativeLinker();
        CredentialSwitch.Syscalls broken = CredentialSwitch.Syscalls.forArch(System.getProperty("os.arch"))
                .orElseThrow()
                .withReturnSetresuid(100_000); // no such system call: ENOSYS on the way back
        CredentialSwitch credentials =
                CredentialSwitch.start(linker, linker.defaultLookup(), broken).orElseThrow();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment groups = arena.allocate(4);

            assertThatThrownBy(() -> credentials.run(() -> {
                        int refused = credentials.enter(1234, 1234, groups, 0);
                        if (!credentials.leave()) {
                            throw new CredentialSwitch.Stuck(0, List.of());
                        }
                        return refused;
                    }))
                    .isInstanceOf(CredentialSwitch.Stuck.class);

            assertThat(credentials.usable()).isFalse();
            assertThatThrownBy(() -> credentials.run(() -> "anything"))
                    .isInstanceOf(CredentialSwitch.Unavailable.class);
            Path task = Path.of("/proc/self/task/" + credentials.tid() + "/status");
            assertThat(status(task).get("Uid"))
                    .as("it still has the user's credentials")
                    .isEqualTo("1234\t1234\t0\t1234");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!status(task).get("State").startsWith("S") && System.nanoTime() < deadline) {
                Thread.yield(); // it parks right after telling its caller
            }
            assertThat(status(task).get("State")).as("it parks for good").startsWith("S");
        } finally {
            makeDumpableAgain(linker); // the failed way back left the process undumpable; the other tests check it
        }
    }

    @SuppressWarnings("restricted") // a downcall to glibc's prctl
    private static void makeDumpableAgain(Linker linker) throws Throwable {
        var prctl = linker.downcallHandle(
                linker.defaultLookup().find("prctl").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_LONG),
                Linker.Option.firstVariadicArg(1));
        assertThat((int) prctl.invokeExact(4, 1L))
                .as("prctl(PR_SET_DUMPABLE, 1)")
                .isZero();
    }

    @Test
    void a_launcher_whose_thread_cannot_return_refuses_starts_and_leaves_nothing_open() throws Throwable {
        CredentialSwitch.Syscalls broken = CredentialSwitch.Syscalls.forArch(System.getProperty("os.arch"))
                .orElseThrow()
                .withReturnSetresuid(100_000);
        long descriptors = openDescriptors();
        // its warm-up window cannot return: the thread is retired right away
        NativeSpawn stuck = NativeSpawn.load(Optional.of(broken)).orElseThrow();
        try {
            assertThat(stuck.switchesUsers())
                    .as("processes of other users go through setpriv")
                    .isFalse();
            assertThatThrownBy(() -> stuck.startAs(
                            new CredentialSwitch.Target(1234, 1234, List.of()),
                            List.of("/bin/true"),
                            ENV,
                            Path.of("/")))
                    .isInstanceOf(CredentialSwitch.Unavailable.class);
            assertThat(openDescriptors())
                    .as("the stuck start's pipes were closed by its caller")
                    .isEqualTo(descriptors);
            Process own = stuck.start(List.of("/bin/true"), ENV, Path.of("/"));
            assertThat(own.waitFor(10, TimeUnit.SECONDS))
                    .as("envd's own user still starts directly")
                    .isTrue();
            own.getInputStream().close();
            own.getErrorStream().close();
        } finally {
            stuck.close();
            makeDumpableAgain(Linker.nativeLinker());
        }
    }

    @Test
    void without_a_switch_envds_own_user_still_starts_directly() throws Exception {
        Process process = spawn.start(List.of("/bin/cat", "/proc/self/status"), ENV, Path.of("/"));
        Map<String, String> child = parse(new String(process.getInputStream().readAllBytes(), UTF_8));
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(child.get("Uid")).isEqualTo(own.get("Uid"));
        assertThat(child.get("CapEff")).isEqualTo(own.get("CapEff"));
    }

    private Map<String, String> childStatus(CredentialSwitch.Target user) throws Exception {
        Process process = spawn.startAs(user, List.of("/bin/cat", "/proc/self/status"), ENV, Path.of("/"));
        try (var stdout = process.getInputStream();
                var stderr = process.getErrorStream()) {
            String out = new String(stdout.readAllBytes(), UTF_8);
            assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(process.exitValue())
                    .as(new String(stderr.readAllBytes(), UTF_8))
                    .isZero();
            return parse(out);
        }
    }

    private void assertBackAtEnvdsCredentials() throws IOException {
        Map<String, String> thread =
                status(Path.of("/proc/self/task/" + spawn.users().orElseThrow().tid() + "/status"));
        for (String field : List.of("Uid", "Gid", "Groups", "CapEff", "CapPrm", "CapInh", "CapAmb", "NoNewPrivs")) {
            assertThat(thread.get(field)).as(field).isEqualTo(own.get(field));
        }
        assertThat(spawn.users().orElseThrow().dumpable()).as("dumpable").isEqualTo(1);
    }

    private static Map<Integer, Map<String, String>> tasks() {
        Map<Integer, Map<String, String>> tasks = new HashMap<>();
        try (Stream<Path> dirs = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : dirs.toList()) {
                try {
                    tasks.put(Integer.parseInt(task.getFileName().toString()), status(task.resolve("status")));
                } catch (NoSuchFileException exited) {
                    // a thread that ended meanwhile
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return tasks;
    }

    private static Map<String, String> status(Path file) throws IOException {
        return parse(Files.readString(file));
    }

    private static Map<String, String> parse(String status) {
        Map<String, String> fields = new HashMap<>();
        status.lines().forEach(line -> {
            int colon = line.indexOf(':');
            fields.put(line.substring(0, colon), line.substring(colon + 1).strip());
        });
        return fields;
    }

    private static long openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
