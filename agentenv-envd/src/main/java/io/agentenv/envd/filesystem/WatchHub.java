package io.agentenv.envd.filesystem;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;
import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JDK {@link WatchService} (one inotify instance and one poller thread) shared by every {@link DirectoryWatch},
 * so that many watches cost neither an inotify instance each (the kernel allows 128 per user by default) nor a
 * platform thread each. A virtual thread takes each signalled key once and hands its events to every watch that
 * registered the directory; the JDK returns the same key when a directory is registered twice, so keys are
 * reference-counted per watch. Created lazily on the first registration. Safe for concurrent use.
 */
public final class WatchHub implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WatchHub.class);

    /** Receives the events of keys it registered. Called on the hub's thread: must not block. */
    interface Listener {
        void onEvents(WatchKey key, List<WatchEvent<?>> events, boolean stillValid);
    }

    private final FileSystem fileSystem;
    private final Object lock = new Object();
    private final Map<WatchKey, Set<Listener>> listeners = new HashMap<>(); // guarded by lock
    private WatchService service; // guarded by lock
    private boolean closed; // guarded by lock

    public WatchHub() {
        this(FileSystems.getDefault());
    }

    WatchHub(FileSystem fileSystem) {
        this.fileSystem = requireNonNull(fileSystem, "fileSystem is null");
    }

    /**
     * Watches {@code dir} (creations, deletions and modifications of its entries) for {@code listener}. The inotify
     * registration is a quick local system call, made under the lock so that a concurrent release cannot cancel the
     * key in between.
     */
    WatchKey register(Path dir, Listener listener) throws IOException {
        requireNonNull(dir, "dir is null");
        requireNonNull(listener, "listener is null");
        synchronized (lock) {
            if (closed) {
                throw new ClosedWatchServiceException();
            }
            if (service == null) {
                service = fileSystem.newWatchService();
                WatchService started = service;
                Thread.ofVirtual().name("watch-hub").start(() -> dispatch(started));
            }
            WatchKey key = dir.register(service, ENTRY_CREATE, ENTRY_DELETE, ENTRY_MODIFY);
            listeners.computeIfAbsent(key, k -> new LinkedHashSet<>()).add(listener);
            return key;
        }
    }

    /** Drops {@code listener}'s interest in {@code key}; the directory stops being watched when nobody is left. */
    void release(WatchKey key, Listener listener) {
        synchronized (lock) {
            Set<Listener> interested = listeners.get(key);
            if (interested == null || !interested.remove(listener)) {
                return;
            }
            if (interested.isEmpty()) {
                listeners.remove(key);
                key.cancel();
            }
        }
    }

    /** How many directories are watched (for tests and diagnostics). */
    int watchedDirectories() {
        synchronized (lock) {
            return listeners.size();
        }
    }

    private void dispatch(WatchService watched) {
        try {
            while (true) {
                WatchKey key = watched.take();
                List<WatchEvent<?>> events = key.pollEvents();
                boolean valid = key.reset();
                List<Listener> targets;
                synchronized (lock) {
                    Set<Listener> interested = valid ? listeners.get(key) : listeners.remove(key);
                    targets = interested == null ? List.of() : new ArrayList<>(interested);
                }
                for (Listener target : targets) { // outside the lock: listeners only enqueue
                    try {
                        target.onEvents(key, events, valid);
                    } catch (RuntimeException e) {
                        log.atError().setCause(e).log("a directory watch failed to take its events");
                    }
                }
            }
        } catch (ClosedWatchServiceException | InterruptedException e) {
            // closed
        }
    }

    @Override
    public void close() {
        WatchService toClose;
        synchronized (lock) {
            closed = true;
            toClose = service;
            listeners.clear();
        }
        if (toClose != null) {
            try {
                toClose.close();
            } catch (IOException e) {
                log.atWarn().setCause(e).log("closing the watch service failed");
            }
        }
    }
}
