package io.agentenv.store.jdbc;

import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.StoreException;
import java.sql.SQLException;

/**
 * How a store's database runs units of work: each one transaction, committed (a write) or ended (a read) before the
 * call returns. A unit's SQL errors reach the caller as {@link StoreException} naming what it did, and nothing of a
 * failed unit is kept; its other exceptions are thrown as they are, after the same roll-back.
 */
public interface Transactions {
    /** A unit of work on the connection's statements. */
    @FunctionalInterface
    interface Work<T> {
        T run(PreparedStatements statements) throws SQLException;
    }

    /**
     * Runs {@code work} as a read. {@code what} and {@code subject} (null, or what it reads, e.g. a sandbox id) name it
     * in messages.
     */
    <T> T read(String what, Object subject, Work<T> work);

    /** Runs {@code work} as a write, durable as {@code durability} asks before this returns. */
    <T> T write(String what, Object subject, SandboxStore.Durability durability, Work<T> work);

    /** A read without a subject. */
    default <T> T read(String what, Work<T> work) {
        return read(what, null, work);
    }

    /** A write without a subject, durable before this returns. */
    default <T> T write(String what, Work<T> work) {
        return write(what, null, SandboxStore.Durability.NOW, work);
    }

    /** A write without a subject. */
    default <T> T write(String what, SandboxStore.Durability durability, Work<T> work) {
        return write(what, null, durability, work);
    }

    /** A unit's name for messages: {@code what}, and its subject when there is one. */
    static String describe(String what, Object subject) {
        return subject == null ? what : what + " " + subject;
    }
}
