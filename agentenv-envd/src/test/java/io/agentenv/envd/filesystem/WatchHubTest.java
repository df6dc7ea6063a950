package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WatchHubTest {
    private static final WatchOptions OPTIONS = new WatchOptions(
            WatchOptions.Scope.RECURSIVE, WatchOptions.Detail.NAME_ONLY, WatchOptions.Mounts.LOCAL_ONLY);

    @TempDir
    Path dir;

    private final WatchHub hub = new WatchHub();

    @AfterEach
    void close() {
        hub.close();
    }

    private static boolean sees(DirectoryWatch watch, String name) throws InterruptedException {
        List<FsEvent> seen = new ArrayList<>();
        Instant deadline = Instant.now().plusSeconds(10);
        while (seen.stream().noneMatch(e -> e.name().equals(name) && e.type() == EventType.CREATE)) {
            if (Instant.now().isAfter(deadline)) {
                return false;
            }
            seen.addAll(watch.poll(Duration.ofMillis(100)));
        }
        return true;
    }

    @Test
    void two_watches_of_one_directory_both_get_its_events_and_closing_one_keeps_the_other() throws Exception {
        Files.createDirectory(dir.resolve("sub"));
        DirectoryWatch first = DirectoryWatch.start(dir, OPTIONS, hub);
        DirectoryWatch second = DirectoryWatch.start(dir, OPTIONS, hub);

        Files.writeString(dir.resolve("sub/a"), "x");
        assertThat(sees(first, "sub/a")).isTrue();
        assertThat(sees(second, "sub/a")).isTrue();

        first.close();
        Files.writeString(dir.resolve("sub/b"), "x");

        assertThat(sees(second, "sub/b")).isTrue();
        assertThatThrownBy(() -> first.poll(Duration.ofMillis(10))).isInstanceOf(ClosedWatchServiceException.class);
        second.close();
    }

    @Test
    void directories_are_released_when_the_last_watch_closes() throws Exception {
        Files.createDirectories(dir.resolve("a/b"));
        DirectoryWatch first = DirectoryWatch.start(dir, OPTIONS, hub);
        DirectoryWatch second = DirectoryWatch.start(dir.resolve("a"), OPTIONS, hub);
        assertThat(hub.watchedDirectories()).isEqualTo(3);

        first.close();
        assertThat(hub.watchedDirectories()).isEqualTo(2);
        second.close();

        assertThat(hub.watchedDirectories()).isZero();
    }

    @Test
    void closing_a_watch_ends_its_pending_poll_with_closed_watch_service() throws Exception {
        DirectoryWatch watch = DirectoryWatch.start(dir, OPTIONS, hub);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<List<FsEvent>> poll = threads.submit(() -> watch.poll(Duration.ofSeconds(30)));

            watch.close();

            assertThatThrownBy(() -> poll.get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(ClosedWatchServiceException.class);
        }
    }
}
