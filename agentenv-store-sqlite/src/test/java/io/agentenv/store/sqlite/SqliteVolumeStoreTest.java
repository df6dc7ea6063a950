package io.agentenv.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.volumes.VolumeRecord;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Volume records in the SQLite store: unique names, newest first, kept across a reopen, deleted. */
class SqliteVolumeStoreTest {
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00.123Z");

    @TempDir
    Path dir;

    private static VolumeRecord volume(String id, String name, Instant at) {
        return new VolumeRecord(id, name, 1024, at);
    }

    @Test
    void insertsFindsAndListsNewestFirst() {
        try (SqliteSandboxStore sqlite = SqliteSandboxStore.open(dir.resolve("agentenv.db"))) {
            VolumeRecord a = volume("aaaaaaaaaaaaaaaaaaaa", "first", T0);
            VolumeRecord b = volume("bbbbbbbbbbbbbbbbbbbb", "second", T0.plusSeconds(1));
            assertThat(sqlite.volumes().insert(a)).isTrue();
            assertThat(sqlite.volumes().insert(b)).isTrue();
            assertThat(sqlite.volumes().find(a.id())).contains(a);
            assertThat(sqlite.volumes().find("cccccccccccccccccccc")).isEmpty();
            assertThat(sqlite.volumes().list()).containsExactly(b, a);
        }
    }

    @Test
    void aTakenNameIsRefusedAndNothingIsStored() {
        try (SqliteSandboxStore sqlite = SqliteSandboxStore.open(dir.resolve("agentenv.db"))) {
            assertThat(sqlite.volumes().insert(volume("aaaaaaaaaaaaaaaaaaaa", "data", T0)))
                    .isTrue();
            assertThat(sqlite.volumes().insert(volume("bbbbbbbbbbbbbbbbbbbb", "data", T0)))
                    .isFalse();
            assertThat(sqlite.volumes().list()).hasSize(1);
        }
    }

    @Test
    void recordsSurviveAReopenAndDeleteRemovesThem() {
        VolumeRecord a = new VolumeRecord("aaaaaaaaaaaaaaaaaaaa", "kept", 2048, T0);
        try (SqliteSandboxStore sqlite = SqliteSandboxStore.open(dir.resolve("agentenv.db"))) {
            sqlite.volumes().insert(a);
        }
        try (SqliteSandboxStore sqlite = SqliteSandboxStore.open(dir.resolve("agentenv.db"))) {
            assertThat(sqlite.volumes().find(a.id())).contains(a);
            assertThat(sqlite.volumes().delete(a.id())).isTrue();
            assertThat(sqlite.volumes().delete(a.id())).isFalse();
        }
        try (SqliteSandboxStore sqlite = SqliteSandboxStore.open(dir.resolve("agentenv.db"))) {
            assertThat(sqlite.volumes().list()).isEmpty();
        }
    }
}
