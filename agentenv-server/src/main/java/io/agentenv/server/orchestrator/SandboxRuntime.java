package io.agentenv.server.orchestrator;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

import static java.util.Objects.requireNonNull;

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
