package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WatchersTest {
    private static final WatchOptions OPTIONS = new WatchOptions(
            WatchOptions.Scope.CHILDREN, WatchOptions.Detail.NAME_ONLY, WatchOptions.Mounts.LOCAL_ONLY);

    @TempDir
    Path dir;

    private final WatchHub hub = new WatchHub();
    private final Watchers watchers = new Watchers(hub, 4, 100);

    @AfterEach
    void close() {
        watchers.close();
        hub.close();
    }

    @Test
    void events_are_buffered_until_fetched_and_fetched_only_once() throws Exception {
        String id = watchers.create(dir, OPTIONS);

        Files.writeString(dir.resolve("a.txt"), "x");

        List<FsEvent> seen = new ArrayList<>();
        Instant deadline = Instant.now().plusSeconds(10);
        while (seen.stream().noneMatch(e -> e.name().equals("a.txt") && e.type() == EventType.CREATE)) {
            assertThat(Instant.now()).isBefore(deadline);
            seen.addAll(watchers.drain(id));
            Thread.onSpinWait();
        }
        assertThat(watchers.drain(id)).noneMatch(e -> e.type() == EventType.CREATE);
    }

    @Test
    void an_unknown_or_removed_watcher_is_not_found() {
        String id = watchers.create(dir, OPTIONS);
        watchers.remove(id);

        assertThatThrownBy(() -> watchers.drain(id))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.NOT_FOUND));
        assertThatThrownBy(() -> watchers.remove("nope"))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.NOT_FOUND));
    }

    @Test
    void the_number_of_watchers_is_bounded() {
        for (int i = 0; i < 4; i++) {
            watchers.create(dir, OPTIONS);
        }

        assertThatThrownBy(() -> watchers.create(dir, OPTIONS))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.RESOURCE_EXHAUSTED));
    }

    @Test
    void a_watcher_that_overflows_its_buffer_reports_resource_exhausted() throws Exception {
        Watchers small = new Watchers(hub, 1, 3);
        try {
            String id = small.create(dir, OPTIONS);
            for (int i = 0; i < 10; i++) {
                Files.writeString(dir.resolve("f" + i), "x");
            }
            Instant deadline = Instant.now().plusSeconds(10);
            while (true) {
                assertThat(Instant.now()).isBefore(deadline);
                try {
                    small.drain(id);
                } catch (FsException e) {
                    assertThat(e.error()).isEqualTo(FsError.RESOURCE_EXHAUSTED);
                    break;
                }
                Thread.onSpinWait();
            }
        } finally {
            small.close();
        }
    }
}
