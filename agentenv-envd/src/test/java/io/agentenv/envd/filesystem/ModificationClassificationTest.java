package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ModificationClassificationTest {
    private static final int FILE = 0100644;

    private static EntrySnapshot file(long mtime, long ctime, long size, int mode) {
        return new EntrySnapshot(1, 2, FileTime.fromMillis(mtime), FileTime.fromMillis(ctime), size, mode, 0, 0);
    }

    @Test
    void a_new_mtime_is_a_write() {
        assertThat(EntrySnapshot.classify(file(1, 1, 5, FILE), file(2, 2, 5, FILE)))
                .containsExactly(EventType.WRITE);
    }

    @Test
    void a_changed_mode_is_a_chmod() {
        assertThat(EntrySnapshot.classify(file(1, 1, 5, FILE), file(1, 2, 5, 0100600)))
                .containsExactly(EventType.CHMOD);
    }

    @Test
    void a_write_followed_by_a_chmod_in_one_batch_is_both() {
        assertThat(EntrySnapshot.classify(file(1, 1, 5, FILE), file(2, 3, 9, 0100600)))
                .containsExactly(EventType.WRITE, EventType.CHMOD);
    }

    @Test
    void a_ctime_only_change_such_as_an_xattr_or_same_owner_chown_is_a_chmod() {
        assertThat(EntrySnapshot.classify(file(1, 1, 5, FILE), file(1, 2, 5, FILE)))
                .containsExactly(EventType.CHMOD);
    }

    @Test
    void no_visible_change_with_ctime_equal_to_mtime_is_a_rewrite_within_the_clock_tick() {
        assertThat(EntrySnapshot.classify(file(2, 2, 5, FILE), file(2, 2, 5, FILE)))
                .containsExactly(EventType.WRITE);
    }

    @Test
    void a_directory_only_ever_gets_chmod() {
        assertThat(EntrySnapshot.classify(file(1, 1, 5, 040755), file(2, 2, 6, 040755)))
                .containsExactly(EventType.CHMOD);
    }

    @Test
    void without_a_previous_snapshot_the_ctime_and_mtime_order_decides() {
        assertThat(EntrySnapshot.classify(null, file(2, 2, 5, FILE))).containsExactly(EventType.WRITE);
        assertThat(EntrySnapshot.classify(null, file(2, 3, 5, FILE))).containsExactly(EventType.CHMOD);
    }
}
