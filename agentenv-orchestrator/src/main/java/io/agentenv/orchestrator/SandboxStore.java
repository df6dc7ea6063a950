package io.agentenv.orchestrator;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Durable sandbox records, the snapshot catalog and the token seed. Every mutating method returns only after its
 * change is durable (or throws {@link StoreException} and changed nothing), except an insert asked for
 * {@link Durability#WITH_NEXT_WRITE}. Implementations must be safe for concurrent use; the conditional methods are
 * atomic and are the orchestrator's per-sandbox lock.
 */
public interface SandboxStore extends AutoCloseable {
    /** When a write has to be on disk. */
    enum Durability {
        /** Before the call returns. */
        NOW,
        /**
         * With the next write that is durable {@link #NOW} (which makes every earlier change durable too); a crash
         * before that may lose it. Visible to reads at once.
         */
        WITH_NEXT_WRITE
    }

    /** Adds a new record, durable before this returns; throws StoreException if the id exists. */
    default void insert(SandboxRecord record) {
        insert(record, Durability.NOW);
    }

    /** Adds a new record, durable as asked; throws StoreException if the id exists. */
    void insert(SandboxRecord record, Durability durability);

    Optional<SandboxRecord> get(SandboxId id);

    /** Sets the state to {@code to} iff the current state is in {@code from}. False: missing, or another state won. */
    boolean transition(SandboxId id, Set<SandboxState> from, SandboxState to);

    /** Replaces the whole record iff the stored state is in {@code expected}. */
    boolean replace(SandboxRecord record, Set<SandboxState> expected);

    /** Sets only the TTL columns iff the stored state is in {@code expected} (other writers' columns are untouched). */
    boolean updateTtl(SandboxId id, Set<SandboxState> expected, Duration timeout, Optional<Instant> expiresAt);

    /** Sets only the network policy iff the stored state is in {@code expected}. */
    boolean updateNetwork(SandboxId id, Set<SandboxState> expected, NetworkPolicy network);

    /** Sets only the custom extension params iff the stored state is in {@code expected}. */
    boolean updateCustomExtensionParams(SandboxId id, Set<SandboxState> expected, String customExtensionParams);

    /** Deletes the record iff its state is in {@code expected}. */
    boolean delete(SandboxId id, Set<SandboxState> expected);

    /** Ids of RUNNING sandboxes whose expiresAt is at or before {@code now}, soonest first. */
    List<SandboxId> listExpired(Instant now);

    /** Ids of the sandboxes in {@code state} now, in one read (the liveness check's per-round view). */
    Set<SandboxId> idsIn(SandboxState state);

    /** Ids of the sandboxes, in any state, that mount volume {@code volumeId}. */
    Set<SandboxId> mounting(String volumeId);

    /** Keyset-paginated list in (startedAt, id) order. */
    Page<SandboxRecord> list(SandboxQuery query);

    /** Every record, for restart recovery and shutdown. */
    List<SandboxRecord> all();

    /**
     * Adds a snapshot; each of its aliases is moved to it from whatever snapshot held it before (the newest snapshot
     * with a name wins, as in E2B).
     */
    void insertSnapshot(SnapshotRecord snapshot);

    /** By id, else by alias. */
    Optional<SnapshotRecord> findSnapshot(String idOrAlias);

    /** Newest first by (createdAt, id). */
    Page<SnapshotRecord> listSnapshots(SnapshotQuery query);

    /** Removes the snapshot and its aliases; false if it did not exist. */
    boolean deleteSnapshot(TemplateId id);

    /**
     * The seed for envd and traffic token derivation: 64 lowercase hex characters, created from a SecureRandom on
     * first use and the same on every later call and after a restart.
     */
    String tokenSeed();

    @Override
    void close();
}
