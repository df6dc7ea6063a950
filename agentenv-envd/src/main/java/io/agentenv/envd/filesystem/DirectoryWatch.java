package io.agentenv.envd.filesystem;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;
import static java.nio.file.StandardWatchEventKinds.OVERFLOW;
import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a directory (optionally its whole tree) with the JDK {@link java.nio.file.WatchService}, which on Linux is inotify, and
 * reports changes the way E2B's envd (fsnotify) does: names relative to the watched directory, CREATE, WRITE, REMOVE,
 * RENAME and CHMOD, and newly created subdirectories watched too when recursive.
 *
 * <p>The JDK folds inotify's events into three kinds, so two distinctions are recovered from a per-entry snapshot of
 * (device, inode, mtime, ctime, size, mode, owner):
 * <ul>
 *   <li>{@code ENTRY_MODIFY} is IN_MODIFY or IN_ATTRIB. It becomes WRITE when the size or mtime changed, CHMOD when the
 *       mode or owner changed or ctime moved past mtime (a metadata-only change), both when both happened; with no
 *       visible change it is WRITE if ctime equals mtime (a rewrite within the clock tick) and CHMOD otherwise. On a
 *       directory it is always CHMOD: inotify never reports a subdirectory's own content changes to its parent.</li>
 *   <li>{@code ENTRY_DELETE} is IN_DELETE or IN_MOVED_FROM. A delete whose inode reappears in a CREATE of the same
 *       batch (the JDK delivers both halves of a rename together) is reported as RENAME of the old name, followed by
 *       CREATE of the new one, as fsnotify does; otherwise it is REMOVE, which is also what an entry moved out of the
 *       watched tree looks like.</li>
 * </ul>
 * All watches share one {@link WatchHub}. Not thread-safe: one thread polls; {@link #close()} may be called from any
 * thread and ends a blocked poll.
 */
public final class DirectoryWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DirectoryWatch.class);
    /**
     * How long to wait for the second half of a rename that did not come in the same delivery (one that crosses
     * directories, or whose halves the JDK's poller thread queued apart because it was preempted between them: 5 ms
     * turned renames into REMOVE + CREATE on a busy 2-CPU host). A plain delete is reported this much later.
     */
    private static final Duration RENAME_GRACE = Duration.ofMillis(25);

    private static final Set<String> NETWORK_FILESYSTEMS =
            Set.of("nfs", "nfs4", "cifs", "smb", "smb2", "smb3", "smbfs", "9p");
    /** Deliveries a slow consumer may have queued before further ones are dropped. */
    private static final int MAX_QUEUED = 10_000;

    private static final Delivery CLOSED = new Delivery(null, List.of(), false);

    private final Path root;
    private final WatchOptions options;
    private final WatchHub hub;
    private final WatchHub.Listener listener = this::enqueue;
    private final BlockingQueue<Delivery> queue = new LinkedBlockingQueue<>();
    private final Map<WatchKey, Path> directories = new ConcurrentHashMap<>();
    private final Map<Path, EntrySnapshot> snapshots = new HashMap<>(); // poll thread only
    private final AtomicBoolean dropping = new AtomicBoolean();
    private volatile boolean closed;

    private DirectoryWatch(Path root, WatchOptions options, WatchHub hub) {
        this.root = root;
        this.options = options;
        this.hub = hub;
    }

    /** The events of one signalled key, as the hub handed them over. */
    private record Delivery(WatchKey key, List<WatchEvent<?>> events, boolean valid) {}

    /**
     * Starts watching {@code dir} (an absolute path, symlinks followed).
     *
     * @throws FsException NOT_FOUND if it does not exist, INVALID_ARGUMENT if it is not a directory or is on a network
     *     filesystem that the options do not allow, RESOURCE_EXHAUSTED when the inotify limits are reached
     */
    public static DirectoryWatch start(Path dir, WatchOptions options, WatchHub hub) {
        requireNonNull(dir, "dir is null");
        requireNonNull(options, "options is null");
        requireNonNull(hub, "hub is null");
        if (!dir.isAbsolute()) {
            throw new IllegalArgumentException("dir must be absolute: " + dir);
        }
        if (!Files.exists(dir)) {
            throw new FsException(FsError.NOT_FOUND, "path '" + dir + "' not found");
        }
        if (!Files.isDirectory(dir)) {
            throw new FsException(FsError.INVALID_ARGUMENT, "path '" + dir + "' not a directory");
        }
        if (options.mounts() == WatchOptions.Mounts.LOCAL_ONLY && isNetworkMount(dir)) {
            throw new FsException(FsError.INVALID_ARGUMENT, "cannot watch path on network filesystem: '" + dir + "'");
        }
        DirectoryWatch watch = new DirectoryWatch(dir, options, hub);
        try {
            watch.watchTree(dir, options.scope() == WatchOptions.Scope.RECURSIVE ? Integer.MAX_VALUE : 1);
        } catch (IOException | RuntimeException e) {
            watch.close();
            if (e instanceof FsException fe) {
                throw fe;
            }
            throw new FsException(
                    FsError.RESOURCE_EXHAUSTED, "error adding path '" + dir + "' to watcher: " + e.getMessage(), e);
        }
        return watch;
    }

    private static boolean isNetworkMount(Path dir) {
        try {
            String type = Files.getFileStore(dir).type().toLowerCase(Locale.ROOT);
            return NETWORK_FILESYSTEMS.contains(type) || type.startsWith("fuse");
        } catch (IOException e) {
            return false;
        }
    }

    /** The watched directory. */
    public Path root() {
        return root;
    }

    /**
     * Waits up to {@code timeout} for changes and returns them in order; empty when nothing changed.
     *
     * @throws ClosedWatchServiceException once the watch is closed
     */
    public List<FsEvent> poll(Duration timeout) throws InterruptedException {
        Delivery first = take(queue.poll(timeout.toNanos(), TimeUnit.NANOSECONDS));
        if (first == null) {
            return List.of();
        }
        Batch batch = new Batch();
        process(first, batch);
        drainReady(batch);
        for (int round = 0; round < 3 && !batch.pending.isEmpty(); round++) {
            Delivery late = take(queue.poll(RENAME_GRACE.toNanos(), TimeUnit.NANOSECONDS));
            if (late == null) {
                break;
            }
            process(late, batch);
            drainReady(batch);
        }
        return batch.finish();
    }

    @SuppressWarnings("ReferenceEquality") // CLOSED is a sentinel instance
    private Delivery take(Delivery delivery) {
        if (delivery == CLOSED || (delivery == null && closed)) {
            queue.offer(CLOSED); // every later poll fails too
            throw new ClosedWatchServiceException();
        }
        return delivery;
    }

    private void drainReady(Batch batch) {
        for (Delivery next = take(queue.poll()); next != null; next = take(queue.poll())) {
            process(next, batch);
        }
    }

    /** Called on the hub's thread. */
    private void enqueue(WatchKey key, List<WatchEvent<?>> events, boolean valid) {
        if (closed) {
            return;
        }
        if (queue.size() >= MAX_QUEUED) {
            if (dropping.compareAndSet(false, true)) {
                log.atWarn().addKeyValue("path", root).log("watch consumer is too slow; dropping changes");
            }
            return;
        }
        dropping.set(false);
        queue.offer(new Delivery(key, events, valid));
    }

    /** Stops watching; a blocked or later {@link #poll} throws {@link ClosedWatchServiceException}. */
    @Override
    public void close() {
        closed = true;
        for (WatchKey key : List.copyOf(directories.keySet())) {
            directories.remove(key);
            hub.release(key, listener);
        }
        queue.offer(CLOSED);
    }

    @SuppressWarnings("ReferenceEquality") // watch event kinds are constants, compared by identity as the JDK does
    private void process(Delivery delivery, Batch batch) {
        Path dir = directories.get(delivery.key());
        if (!delivery.valid()) {
            directories.remove(delivery.key());
        }
        if (dir == null) {
            return;
        }
        for (WatchEvent<?> event : delivery.events()) {
            if (event.kind() == OVERFLOW) {
                log.atWarn().addKeyValue("path", root).log("watch queue overflowed; some changes were not reported");
                continue;
            }
            Path child = dir.resolve((Path) event.context());
            String name = root.relativize(child).toString();
            if (event.kind() == ENTRY_CREATE) {
                onCreate(child, name, batch);
            } else if (event.kind() == ENTRY_DELETE) {
                onDelete(child, name, batch);
            } else if (event.kind() == ENTRY_MODIFY) {
                onModify(child, name, batch);
            }
        }
    }

    private void onCreate(Path child, String name, Batch batch) {
        EntrySnapshot now = EntrySnapshot.of(child);
        if (now != null) {
            Slot renamed = batch.pending.remove(now.id());
            if (renamed != null) {
                renamed.type = EventType.RENAME;
            }
            snapshots.put(child, now);
        }
        batch.add(name, EventType.CREATE, entryOf(child));
        if (now != null && now.directory() && options.scope() == WatchOptions.Scope.RECURSIVE) {
            try {
                watchTree(child, Integer.MAX_VALUE);
            } catch (IOException e) {
                log.atWarn().addKeyValue("path", child).setCause(e).log("cannot watch a new subdirectory");
            }
        }
    }

    private void onDelete(Path child, String name, Batch batch) {
        EntrySnapshot before = snapshots.remove(child);
        Slot slot = batch.add(name, EventType.REMOVE, Optional.empty());
        if (before != null) {
            batch.pending.put(before.id(), slot);
            if (before.directory()) {
                forgetTree(child);
            }
        }
    }

    private void onModify(Path child, String name, Batch batch) {
        EntrySnapshot now = EntrySnapshot.of(child);
        if (now == null) { // changed, then removed (the REMOVE follows): judge by what it was
            EntrySnapshot last = snapshots.get(child);
            batch.add(name, last != null && last.directory() ? EventType.CHMOD : EventType.WRITE, Optional.empty());
            return;
        }
        EntrySnapshot before = snapshots.put(child, now);
        for (EventType type : EntrySnapshot.classify(before, now)) {
            batch.add(
                    name, type, type == EventType.WRITE || type == EventType.CHMOD ? entryOf(child) : Optional.empty());
        }
    }

    private Optional<Entry> entryOf(Path child) {
        if (options.detail() == WatchOptions.Detail.NAME_ONLY) {
            return Optional.empty();
        }
        try {
            return Optional.of(new EntryReader().read(child));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Registers {@code top} and its subdirectories down to {@code depth} levels, and snapshots what is in them. */
    private void watchTree(Path top, int depth) throws IOException {
        Files.walkFileTree(top, Set.of(), depth, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                WatchKey key = hub.register(dir, listener);
                directories.put(key, dir); // the JDK hands back the same key for a moved directory: re-point it
                if (closed) { // closed meanwhile: undo, close() may have missed this key
                    directories.remove(key);
                    hub.release(key, listener);
                    return FileVisitResult.TERMINATE;
                }
                remember(dir);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                remember(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                if (file.equals(top)) {
                    throw e;
                }
                log.atWarn().addKeyValue("path", file).setCause(e).log("cannot watch an entry");
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private void remember(Path path) {
        if (path.equals(root)) {
            return;
        }
        EntrySnapshot snapshot = EntrySnapshot.of(path);
        if (snapshot != null) {
            snapshots.put(path, snapshot);
        }
    }

    /** Stops watching a directory that left the tree (or the watched tree's view of it) and drops its snapshots. */
    private void forgetTree(Path dir) {
        for (Iterator<Map.Entry<WatchKey, Path>> it = directories.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<WatchKey, Path> e = it.next();
            if (e.getValue().startsWith(dir)) {
                it.remove();
                hub.release(e.getKey(), listener);
            }
        }
        snapshots.keySet().removeIf(p -> p.startsWith(dir));
    }

    /** One poll's events in order; a REMOVE may still turn into RENAME until the batch is finished. */
    private static final class Batch {
        final List<Slot> slots = new ArrayList<>();
        final Map<EntrySnapshot.Identity, Slot> pending = new HashMap<>();

        Slot add(String name, EventType type, Optional<Entry> entry) {
            Slot slot = new Slot(name, type, entry);
            slots.add(slot);
            return slot;
        }

        List<FsEvent> finish() {
            List<FsEvent> out = new ArrayList<>(slots.size());
            for (Slot slot : slots) {
                out.add(new FsEvent(slot.name, slot.type, slot.entry));
            }
            return out;
        }
    }

    private static final class Slot {
        final String name;
        EventType type;
        final Optional<Entry> entry;

        Slot(String name, EventType type, Optional<Entry> entry) {
            this.name = name;
            this.type = type;
            this.entry = entry;
        }
    }
}
