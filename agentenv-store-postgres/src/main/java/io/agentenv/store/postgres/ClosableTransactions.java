package io.agentenv.store.postgres;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.StoreException;
import io.agentenv.store.jdbc.Transactions;

/** One store's use of the database: refused once that store is closed, while the database stays open for others. */
final class ClosableTransactions implements Transactions {
    private final Transactions db;
    private final String store;
    private volatile boolean closed;

    ClosableTransactions(Transactions db, String store) {
        this.db = requireNonNull(db, "db is null");
        this.store = requireNonNull(store, "store is null");
    }

    @Override
    public <T> T read(String what, Object subject, Work<T> work) {
        checkOpen();
        return db.read(what, subject, work);
    }

    @Override
    public <T> T write(String what, Object subject, SandboxStore.Durability durability, Work<T> work) {
        checkOpen();
        return db.write(what, subject, durability, work);
    }

    void close() {
        closed = true;
    }

    private void checkOpen() {
        if (closed) {
            throw new StoreException("the " + store + " is closed", null);
        }
    }
}
