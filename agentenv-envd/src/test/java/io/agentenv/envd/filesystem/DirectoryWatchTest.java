package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class DirectoryWatchTest {
    private static final WatchOptions CHILDREN = new WatchOptions(
            WatchOptions.Scope.CHILDREN, WatchOptions.Detail.NAME_ONLY, WatchOptions.Mounts.LOCAL_ONLY);
    private static final WatchOptions RECURSIVE = new WatchOptions(
            WatchOptions.Scope.RECURSIVE, WatchOptions.Detail.NAME_ONLY, WatchOptions.Mounts.LOCAL_ONLY);

    @TempDir
    Path dir;

    private final WatchHub hub = new WatchHub();
    private final List<DirectoryWatch> watches = new ArrayList<>();

    @AfterEach
    void closeWatches() {
        watches.forEach(DirectoryWatch::close);
        hub.close();
    }

    private DirectoryWatch watch(Path path, WatchOptions options) {
        DirectoryWatch watch = DirectoryWatch.start(path, options, hub);
        watches.add(watch);
        return watch;
    }

    /** Polls until the events seen so far satisfy {@code done}, failing after a deadline. */
    private static List<FsEvent> awaitEvents(DirectoryWatch watch, Predicate<List<FsEvent>> done)
            throws InterruptedException {
        List<FsEvent> seen = new ArrayList<>();
        Instant deadline = Instant.now().plusSeconds(10);
        while (!done.test(seen)) {
            assertThat(Instant.now()).as("events so far: %s", seen).isBefore(deadline);
            seen.addAll(watch.poll(Duration.ofMillis(100)));
        }
        return seen;
    }

    private static Predicate<List<FsEvent>> has(String name, EventType type) {
        return events -> events.stream().anyMatch(e -> e.name().equals(name) && e.type() == type);
    }

    @Test
    void creating_a_file_is_reported_as_create_with_a_relative_name() throws Exception {
        DirectoryWatch watch = watch(dir, CHILDREN);

        Files.writeString(dir.resolve("new.txt"), "x");

        List<FsEvent> events = awaitEvents(watch, has("new.txt", EventType.CREATE));
        assertThat(events.getFirst()).isEqualTo(new FsEvent("new.txt", EventType.CREATE, Optional.empty()));
    }

    @Test
    void writing_an_existing_file_is_reported_as_write() throws Exception {
        Path file = Files.writeString(dir.resolve("f.txt"), "old");
        DirectoryWatch watch = watch(dir, CHILDREN);

        Files.writeString(file, "new content");

        List<FsEvent> events = awaitEvents(watch, has("f.txt", EventType.WRITE));
        assertThat(events).noneMatch(e -> e.type() == EventType.CHMOD);
    }

    @Test
    void changing_permissions_is_reported_as_chmod_not_write() throws Exception {
        Path file = Files.writeString(dir.resolve("f.txt"), "x");
        DirectoryWatch watch = watch(dir, CHILDREN);

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));

        List<FsEvent> events = awaitEvents(watch, has("f.txt", EventType.CHMOD));
        assertThat(events).noneMatch(e -> e.type() == EventType.WRITE);
    }

    @Test
    void a_rename_in_the_watched_directory_is_rename_of_the_old_then_create_of_the_new() throws Exception {
        Path file = Files.writeString(dir.resolve("old.txt"), "x");
        DirectoryWatch watch = watch(dir, CHILDREN);

        Files.move(file, dir.resolve("new.txt"));

        List<FsEvent> events = awaitEvents(watch, has("new.txt", EventType.CREATE));
        assertThat(events)
                .extracting(FsEvent::name, FsEvent::type)
                .containsExactly(tuple("old.txt", EventType.RENAME), tuple("new.txt", EventType.CREATE));
    }

    @Test
    void deleting_a_file_is_reported_as_remove() throws Exception {
        Path file = Files.writeString(dir.resolve("f.txt"), "x");
        DirectoryWatch watch = watch(dir, CHILDREN);

        Files.delete(file);

        List<FsEvent> events = awaitEvents(watch, has("f.txt", EventType.REMOVE));
        assertThat(events).noneMatch(e -> e.type() == EventType.RENAME);
    }

    @Test
    void a_non_recursive_watch_ignores_changes_below_its_children() throws Exception {
        Path sub = Files.createDirectory(dir.resolve("sub"));
        DirectoryWatch watch = watch(dir, CHILDREN);

        Files.writeString(sub.resolve("hidden.txt"), "x");
        Files.writeString(dir.resolve("marker"), "x");

        List<FsEvent> events = awaitEvents(watch, has("marker", EventType.CREATE));
        assertThat(events).noneMatch(e -> e.name().contains("hidden"));
    }

    @Test
    void a_recursive_watch_names_nested_changes_relative_to_the_root() throws Exception {
        Path nested = Files.createDirectories(dir.resolve("a/b"));
        Path file = Files.writeString(nested.resolve("f.txt"), "x");
        DirectoryWatch watch = watch(dir, RECURSIVE);

        Files.writeString(file, "changed");

        awaitEvents(watch, has("a/b/f.txt", EventType.WRITE));
    }

    @Test
    void a_recursive_watch_follows_directories_created_after_it_started() throws Exception {
        DirectoryWatch watch = watch(dir, RECURSIVE);
        Path sub = Files.createDirectory(dir.resolve("later"));
        awaitEvents(watch, has("later", EventType.CREATE));

        Files.writeString(sub.resolve("f.txt"), "x");

        awaitEvents(watch, has("later/f.txt", EventType.CREATE));
    }

    @Test
    void a_recursive_watch_follows_a_renamed_subdirectory_under_its_new_name() throws Exception {
        Files.createDirectory(dir.resolve("before"));
        DirectoryWatch watch = watch(dir, RECURSIVE);
        Files.move(dir.resolve("before"), dir.resolve("after"));
        awaitEvents(watch, has("after", EventType.CREATE));

        Files.writeString(dir.resolve("after/f.txt"), "x");

        List<FsEvent> events = awaitEvents(watch, has("after/f.txt", EventType.CREATE));
        assertThat(events).noneMatch(e -> e.name().startsWith("before/"));
    }

    @Test
    void entries_are_attached_when_asked_for_and_only_to_create_write_and_chmod() throws Exception {
        Path file = Files.writeString(dir.resolve("f.txt"), "x");
        DirectoryWatch watch = watch(
                dir,
                new WatchOptions(
                        WatchOptions.Scope.CHILDREN, WatchOptions.Detail.WITH_ENTRY, WatchOptions.Mounts.LOCAL_ONLY));

        Files.writeString(dir.resolve("g.txt"), "hello");
        Files.delete(file);

        List<FsEvent> events = awaitEvents(watch, has("f.txt", EventType.REMOVE).and(has("g.txt", EventType.CREATE)));
        FsEvent created = events.stream()
                .filter(e -> e.type() == EventType.CREATE)
                .findFirst()
                .orElseThrow();
        assertThat(created.entry())
                .hasValueSatisfying(
                        e -> assertThat(e.path()).isEqualTo(dir.resolve("g.txt").toString()));
        assertThat(events.stream().filter(e -> e.type() == EventType.REMOVE))
                .allMatch(e -> e.entry().isEmpty());
    }

    @Test
    void watching_a_missing_path_is_not_found_and_a_file_is_an_invalid_argument() throws IOException {
        Path file = Files.writeString(dir.resolve("f"), "");

        assertThatThrownBy(() -> DirectoryWatch.start(dir.resolve("missing"), CHILDREN, hub))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.NOT_FOUND));
        assertThatThrownBy(() -> DirectoryWatch.start(file, CHILDREN, hub))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.INVALID_ARGUMENT));
    }

    @Test
    void a_poll_without_changes_returns_nothing_when_its_timeout_ends() throws Exception {
        DirectoryWatch watch = watch(dir, CHILDREN);

        assertThat(watch.poll(Duration.ofMillis(20))).isEmpty();
    }
}
