package io.agentenv.volumes;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link VolumeStore} owes the registry, as one abstract test (unique names, newest first, kept across a
 * reopen, deleted): extend it once per store.
 */
public abstract class VolumeStoreContract {
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00.123Z");

    @TempDir
    protected Path dir;

    protected VolumeStore store;

    /** A store on {@code dir}; opening the same directory again after {@link #close} is a restart on the same data. */
    protected abstract VolumeStore open(Path dir);

    /** Closes what the last {@link #open} opened. */
    protected abstract void close();

    @BeforeEach
    void openStore() {
        store = open(dir);
    }

    @AfterEach
    void closeStore() {
        close();
    }

    private static VolumeRecord volume(String id, String name, Instant at) {
        return new VolumeRecord(id, name, 1024, at);
    }

    @Test
    void insertsFindsAndListsNewestFirst() {
        VolumeRecord a = volume("aaaaaaaaaaaaaaaaaaaa", "first", T0);
        VolumeRecord b = volume("bbbbbbbbbbbbbbbbbbbb", "second", T0.plusSeconds(1));
        assertThat(store.insert(a)).isTrue();
        assertThat(store.insert(b)).isTrue();
        assertThat(store.find(a.id())).contains(a);
        assertThat(store.find("cccccccccccccccccccc")).isEmpty();
        assertThat(store.list()).containsExactly(b, a);
    }

    @Test
    void aTakenNameIsRefusedAndNothingIsStored() {
        assertThat(store.insert(volume("aaaaaaaaaaaaaaaaaaaa", "data", T0))).isTrue();
        assertThat(store.insert(volume("bbbbbbbbbbbbbbbbbbbb", "data", T0))).isFalse();
        assertThat(store.list()).hasSize(1);
    }

    @Test
    void recordsSurviveAReopenAndDeleteRemovesThem() {
        VolumeRecord a = new VolumeRecord("aaaaaaaaaaaaaaaaaaaa", "kept", 2048, T0);
        store.insert(a);
        store = reopen();
        assertThat(store.find(a.id())).contains(a);
        assertThat(store.delete(a.id())).isTrue();
        assertThat(store.delete(a.id())).isFalse();
        store = reopen();
        assertThat(store.list()).isEmpty();
    }

    private VolumeStore reopen() {
        close();
        return open(dir);
    }
}
