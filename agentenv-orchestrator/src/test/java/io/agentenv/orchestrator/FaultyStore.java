package io.agentenv.orchestrator;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A real store whose next write of a given kind can be made to fail, as a full disk would, which counts its reads
 * of records ({@link #get}) and of id sets ({@link #idsIn}), and which can hold one record read.
 */
final class FaultyStore implements SandboxStore {
    enum Write {
        INSERT,
        REPLACE,
        TRANSITION,
        INSERT_SNAPSHOT
    }

    private final SandboxStore delegate;
    private final Set<Write> failNext = ConcurrentHashMap.newKeySet();
    private final Set<Write> failNextAfterApplying = ConcurrentHashMap.newKeySet();
    private final AtomicInteger recordReads = new AtomicInteger();
    private final AtomicInteger idSetReads = new AtomicInteger();
    private final AtomicReference<CountDownLatch[]> holdNextGet = new AtomicReference<>();
    private final List<Durability> insertDurabilities = new java.util.concurrent.CopyOnWriteArrayList<>();

    FaultyStore(SandboxStore delegate) {
        this.delegate = delegate;
    }

    void failNext(Write write) {
        failNext.add(write);
    }

    /**
     * The next write of this kind is made and then fails: a networked store that committed it and went away before it
     * answered, so its caller cannot tell.
     */
    void failNextAfterApplying(Write write) {
        failNextAfterApplying.add(write);
    }

    /** Reads of single records since the last {@link #resetReads}. */
    int recordReads() {
        return recordReads.get();
    }

    /** Reads of id sets since the last {@link #resetReads}. */
    int idSetReads() {
        return idSetReads.get();
    }

    void resetReads() {
        recordReads.set(0);
        idSetReads.set(0);
    }

    private void maybeFail(Write write) {
        if (failNext.remove(write)) {
            throw new StoreException("injected " + write + " failure", null);
        }
    }

    @Override
    public void insert(SandboxRecord record, Durability durability) {
        maybeFail(Write.INSERT);
        delegate.insert(record, durability);
        insertDurabilities.add(durability);
    }

    /** How each successful insert so far was asked to be durable, in order. */
    List<Durability> insertDurabilities() {
        return List.copyOf(insertDurabilities);
    }

    /**
     * The next {@link #get} reads the record, counts {@code entered} down, and returns it only once {@code release} is
     * counted down: a reader that read a state which a writer then changes.
     */
    void holdNextGet(CountDownLatch entered, CountDownLatch release) {
        holdNextGet.set(new CountDownLatch[] {entered, release});
    }

    @Override
    public Optional<SandboxRecord> get(SandboxId id) {
        recordReads.incrementAndGet();
        Optional<SandboxRecord> read = delegate.get(id);
        CountDownLatch[] hold = holdNextGet.getAndSet(null);
        if (hold != null) {
            hold[0].countDown();
            try {
                if (!hold[1].await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("held get was never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return read;
    }

    @Override
    public boolean transition(SandboxId id, Set<SandboxState> from, SandboxState to) {
        maybeFail(Write.TRANSITION);
        return delegate.transition(id, from, to);
    }

    @Override
    public boolean replace(SandboxRecord record, Set<SandboxState> expected) {
        maybeFail(Write.REPLACE);
        boolean done = delegate.replace(record, expected);
        if (failNextAfterApplying.remove(Write.REPLACE)) {
            throw new StoreException("injected " + Write.REPLACE + " failure after the write was made", null);
        }
        return done;
    }

    @Override
    public boolean updateTtl(SandboxId id, Set<SandboxState> expected, Duration timeout, Optional<Instant> expiresAt) {
        return delegate.updateTtl(id, expected, timeout, expiresAt);
    }

    @Override
    public boolean updateNetwork(SandboxId id, Set<SandboxState> expected, NetworkPolicy network) {
        return delegate.updateNetwork(id, expected, network);
    }

    @Override
    public boolean updateCustomExtensionParams(SandboxId id, Set<SandboxState> expected, String customExtensionParams) {
        return delegate.updateCustomExtensionParams(id, expected, customExtensionParams);
    }

    @Override
    public boolean delete(SandboxId id, Set<SandboxState> expected) {
        return delegate.delete(id, expected);
    }

    @Override
    public List<SandboxId> listExpired(Instant now) {
        return delegate.listExpired(now);
    }

    @Override
    public Set<SandboxId> idsIn(SandboxState state) {
        idSetReads.incrementAndGet();
        return delegate.idsIn(state);
    }

    @Override
    public Set<SandboxId> mounting(String volumeId) {
        return delegate.mounting(volumeId);
    }

    @Override
    public Page<SandboxRecord> list(SandboxQuery query) {
        return delegate.list(query);
    }

    @Override
    public List<SandboxRecord> all() {
        return delegate.all();
    }

    @Override
    public void insertSnapshot(SnapshotRecord snapshot) {
        maybeFail(Write.INSERT_SNAPSHOT);
        delegate.insertSnapshot(snapshot);
    }

    @Override
    public Optional<SnapshotRecord> findSnapshot(String idOrAlias) {
        return delegate.findSnapshot(idOrAlias);
    }

    @Override
    public Page<SnapshotRecord> listSnapshots(SnapshotQuery query) {
        return delegate.listSnapshots(query);
    }

    @Override
    public boolean deleteSnapshot(TemplateId id) {
        return delegate.deleteSnapshot(id);
    }

    @Override
    public String tokenSeed() {
        return delegate.tokenSeed();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
