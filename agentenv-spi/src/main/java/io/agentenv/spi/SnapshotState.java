package io.agentenv.spi;

/**
 * A captured snapshot (memory and filesystem of a running sandbox), opaque to the orchestrator, which records
 * {@link #encode()} in its catalog. Any number of sandboxes can be launched from one snapshot.
 */
public interface SnapshotState {
    byte[] encode();

    Resources resources();
}
