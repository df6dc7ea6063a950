package io.agentenv.volumes;

import java.util.List;
import java.util.Optional;

/** Where volume records are kept (the server's SQLite store). Implementations are thread-safe and durable. */
public interface VolumeStore {
    /** Adds {@code volume}; false (and nothing stored) when its name is taken. */
    boolean insert(VolumeRecord volume);

    Optional<VolumeRecord> find(String id);

    /** Every volume, newest first. */
    List<VolumeRecord> list();

    /** Removes the record; false when there was none. */
    boolean delete(String id);
}
