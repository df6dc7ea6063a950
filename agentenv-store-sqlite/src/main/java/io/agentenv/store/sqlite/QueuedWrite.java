package io.agentenv.store.sqlite;

import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.StoreException;
import io.agentenv.store.jdbc.Transactions;
import java.sql.SQLException;
import java.util.concurrent.CountDownLatch;

/**
 * One caller's unit of work for {@link Database#write(String, Object, SandboxStore.Durability, Transactions.Work)} and, once the
 * batch it was committed in is done, its outcome: the work's value, or its own failure, or the batch's.
 */
final class QueuedWrite<T> {
    private final String what;
    private final Object subject;
    private final SandboxStore.Durability durability;
    private final Transactions.Work<T> work;
    private final CountDownLatch done = new CountDownLatch(1);
    private T value;
    private Throwable failure;

    QueuedWrite(String what, Object subject, SandboxStore.Durability durability, Transactions.Work<T> work) {
        this.what = what;
        this.subject = subject;
        this.durability = durability;
        this.work = work;
    }

    /** What the unit does, for messages: built only when one is needed. */
    String what() {
        return Transactions.describe(what, subject);
    }

    SandboxStore.Durability durability() {
        return durability;
    }

    void run(Statements statements) throws SQLException {
        value = work.run(statements);
    }

    /** Its own failure, rolled back alone while the rest of the batch goes on. */
    void keep(Throwable e) {
        failure = e;
    }

    /** The batch is over; {@code batchFailure} (nothing of the batch was committed, or the store closed) wins. */
    void finish(Throwable batchFailure) {
        if (batchFailure != null) {
            failure = batchFailure;
        }
        done.countDown();
    }

    /** The work's value, or its failure: SQL errors as {@link StoreException}, anything else as thrown. */
    T result() {
        boolean interrupted = false;
        while (true) {
            try {
                done.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the unit is committed or failed regardless: wait for which
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return switch (failure) {
            case null -> value;
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            default -> throw new StoreException("store failed to " + what(), failure);
        };
    }
}
