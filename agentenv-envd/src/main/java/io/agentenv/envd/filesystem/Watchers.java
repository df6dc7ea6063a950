package io.agentenv.envd.filesystem;

import static java.util.Objects.requireNonNull;

import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watchers behind CreateWatcher, GetWatcherEvents and RemoveWatcher: each one buffers its events on a virtual
 * thread until they are fetched. A watcher whose buffer overflows stops and reports RESOURCE_EXHAUSTED on the next
 * fetch. Safe for concurrent use.
 */
public final class Watchers implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Watchers.class);
    private static final Duration POLL = Duration.ofSeconds(1);

    private final WatchHub hub;
    private final int maxBufferedEvents;
    private final int maxWatchers;
    private final Map<String, Buffered> watchers = new ConcurrentHashMap<>();

    public Watchers(WatchHub hub, int maxWatchers, int maxBufferedEvents) {
        this.hub = requireNonNull(hub, "hub is null");
        if (maxWatchers < 1 || maxBufferedEvents < 1) {
            throw new IllegalArgumentException("limits must be >= 1");
        }
        this.maxWatchers = maxWatchers;
        this.maxBufferedEvents = maxBufferedEvents;
    }

    /** Starts a watcher and returns its id. */
    public String create(Path dir, WatchOptions options) {
        if (watchers.size() >= maxWatchers) {
            throw new FsException(
                    FsError.RESOURCE_EXHAUSTED, "too many watchers (at most " + maxWatchers + "); remove some first");
        }
        DirectoryWatch watch = DirectoryWatch.start(dir, options, hub);
        byte[] bytes = new byte[8];
        WatcherIds.RANDOM.nextBytes(bytes);
        String id = "w" + HexFormat.of().formatHex(bytes);
        Buffered buffered = new Buffered(id, watch, maxBufferedEvents);
        watchers.put(id, buffered);
        Thread.ofVirtual().name("watcher-" + id).start(buffered::run);
        return id;
    }

    /**
     * Where watcher ids come from, created at the first watcher: a SecureRandom's set-up (security providers, the
     * entropy source, a generated method handle) cost ~10 ms on envd's path to listening.
     */
    private static final class WatcherIds {
        static final SecureRandom RANDOM = new SecureRandom();
    }

    /** Takes the events buffered since the last call. */
    public List<FsEvent> drain(String id) {
        return find(id).drain();
    }

    public void remove(String id) {
        Buffered buffered = watchers.remove(requireNonNull(id, "id is null"));
        if (buffered == null) {
            throw new FsException(FsError.NOT_FOUND, "watcher with id '" + id + "' not found");
        }
        buffered.watch.close();
    }

    private Buffered find(String id) {
        Buffered buffered = watchers.get(requireNonNull(id, "id is null"));
        if (buffered == null) {
            throw new FsException(FsError.NOT_FOUND, "watcher with id '" + id + "' not found");
        }
        return buffered;
    }

    @Override
    public void close() {
        for (String id : List.copyOf(watchers.keySet())) {
            Buffered buffered = watchers.remove(id);
            if (buffered != null) {
                buffered.watch.close();
            }
        }
    }

    private static final class Buffered {
        final String id;
        final DirectoryWatch watch;
        final int limit;
        private List<FsEvent> events = new ArrayList<>();
        private FsException failure;

        Buffered(String id, DirectoryWatch watch, int limit) {
            this.id = id;
            this.watch = watch;
            this.limit = limit;
        }

        void run() {
            try {
                while (true) {
                    List<FsEvent> batch = watch.poll(POLL);
                    if (!batch.isEmpty() && !append(batch)) {
                        watch.close();
                        return;
                    }
                }
            } catch (ClosedWatchServiceException | InterruptedException e) {
                // removed
            } catch (RuntimeException e) {
                log.atError().addKeyValue("watcher_id", id).setCause(e).log("watcher failed");
                fail(new FsException(FsError.INTERNAL, "watcher failed", e));
            }
        }

        private synchronized boolean append(List<FsEvent> batch) {
            if (events.size() + batch.size() > limit) {
                failure = new FsException(
                        FsError.RESOURCE_EXHAUSTED,
                        "watcher " + id + " buffered more than " + limit + " events; fetch them more often");
                return false;
            }
            events.addAll(batch);
            return true;
        }

        private synchronized void fail(FsException e) {
            failure = e;
        }

        synchronized List<FsEvent> drain() {
            if (failure != null) {
                throw failure;
            }
            List<FsEvent> out = events;
            events = new ArrayList<>();
            return out;
        }
    }
}
