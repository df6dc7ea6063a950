package io.agentenv.objectstore;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/** A store that counts reads and can hold them at a gate until released. */
final class CountingStore implements ObjectStore {
    private final ObjectStore delegate;
    final AtomicInteger reads = new AtomicInteger();
    private volatile CountDownLatch gate = new CountDownLatch(0);

    CountingStore(ObjectStore delegate) {
        this.delegate = delegate;
    }

    /** Reads wait from now on until {@link #releaseReads()}. */
    void holdReads() {
        gate = new CountDownLatch(1);
    }

    /** Lets held and later reads through. */
    void releaseReads() {
        gate.countDown();
    }

    @Override
    public ObjectInfo put(ObjectKey key, ContentWriter content) throws ObjectStoreException {
        return delegate.put(key, content);
    }

    @Override
    public <T> T read(ObjectKey key, ContentReader<T> reader) throws ObjectStoreException {
        reads.incrementAndGet();
        try {
            gate.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ObjectStoreException.Failed("interrupted", e);
        }
        return delegate.read(key, reader);
    }

    @Override
    public Optional<ObjectInfo> stat(ObjectKey key) throws ObjectStoreException {
        return delegate.stat(key);
    }

    @Override
    public boolean delete(ObjectKey key) throws ObjectStoreException {
        return delegate.delete(key);
    }

    @Override
    public List<ObjectEntry> list(String prefix) throws ObjectStoreException {
        return delegate.list(prefix);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
