package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The live backend instances by sandbox id. Each registration gets a new generation, so an operation that detaches
 * "its" handle never detaches a newer one (the stale-handle guard). The monitor guards the map only; backend calls
 * are made through {@link Handle#call}, outside it.
 */
final class SandboxRuntime {
    private final Object monitor = new Object();
    private final Map<SandboxId, Handle> handles = new HashMap<>();
    private long generations;

    Handle register(SandboxId id, SandboxBackend backend) {
        requireNonNull(id, "id is null");
        requireNonNull(backend, "backend is null");
        synchronized (monitor) {
            Handle current = handles.get(id);
            if (current != null) {
                throw new IllegalStateException("sandbox " + id + " already has a live instance");
            }
            Handle handle = new Handle(id, backend, ++generations);
            handles.put(id, handle);
            return handle;
        }
    }

    Optional<Handle> get(SandboxId id) {
        synchronized (monitor) {
            return Optional.ofNullable(handles.get(id));
        }
    }

    /** Removes {@code handle} if it is still the current one for its sandbox. */
    boolean detach(Handle handle) {
        synchronized (monitor) {
            return handles.remove(handle.id(), handle);
        }
    }

    /**
     * The live instance of {@code id} and its guest agent handle, both read under the map's monitor (the backend's
     * {@code envd()} never blocks); empty when no instance is registered. The caller does the guest I/O after this
     * returns, holding nothing.
     */
    Optional<Guest> guest(SandboxId id) {
        synchronized (monitor) {
            Handle handle = handles.get(id);
            return handle == null ? Optional.empty() : Optional.of(new Guest(handle, handle.backend.envd()));
        }
    }

    /** A live instance and its guest agent (empty while the agent is not connected). */
    record Guest(Handle handle, Optional<EnvdApi> envd) {}

    List<Handle> all() {
        synchronized (monitor) {
            return new ArrayList<>(handles.values());
        }
    }

    /** The map's monitor, exposed so tests can assert that no backend call is made while it is held. */
    Object monitor() {
        return monitor;
    }

    @FunctionalInterface
    interface BackendCall<T> {
        T call(SandboxBackend backend) throws BackendException;
    }

    /**
     * One live instance. {@link #call} serialises calls to this instance (the SPI promises backends one lifecycle
     * call at a time); it is the only lock held across backend I/O and is never taken while another lock is held.
     */
    static final class Handle {
        private final SandboxId id;
        private final SandboxBackend backend;
        private final long generation;
        private final ReentrantLock calls = new ReentrantLock();

        private Handle(SandboxId id, SandboxBackend backend, long generation) {
            this.id = id;
            this.backend = backend;
            this.generation = generation;
        }

        SandboxId id() {
            return id;
        }

        long generation() {
            return generation;
        }

        SandboxBackend backend() {
            return backend;
        }

        /**
         * Runs {@code work} only if no other call is in progress on this instance right now (never waits): empty when
         * the instance is busy, for example with a pause. For quick, non-blocking reads such as {@code envd()}.
         */
        <T> Optional<T> tryCall(BackendCall<T> work) throws BackendException {
            if (!calls.tryLock()) {
                return Optional.empty();
            }
            try {
                return Optional.of(work.call(backend));
            } finally {
                calls.unlock();
            }
        }

        <T> T call(BackendCall<T> work) throws BackendException {
            calls.lock();
            try {
                return work.call(backend);
            } finally {
                calls.unlock();
            }
        }
    }
}
