package io.agentenv.objectstore;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A node's local copies of objects, in one directory, each stored under its SHA-256: an object is fetched on first
 * use and then served from disk, and two keys with the same content share one copy.
 *
 * <ul>
 *   <li><b>Integrity</b>: a fetched copy is kept only once the store has checked it against the digest recorded at
 *       put (and against the digest the caller expects, if it names one). Copies found on disk when the cache is
 *       opened (left by an earlier process) are hashed again on their first use, and fetched again if they differ.
 *       Copies are read-only; callers must not change them.
 *   <li><b>One download at a time</b>: threads that ask for a digest that is being fetched wait for that fetch and
 *       share its result (or its failure) instead of fetching it again.
 *   <li><b>Size bound</b>: after each fetch and each release, the least recently used copies are removed until the
 *       cache holds at most {@code maxBytes}. A copy that is in use (an open {@link Lease}) is never removed, so the
 *       cache can exceed its bound while more than that is in use; an object larger than the bound is still served
 *       and is removed once released.
 * </ul>
 *
 * <p>One cache object owns its directory: two processes must not share one. Layout: {@code objects/<sha256 hex>},
 * and {@code tmp/} for fetches in progress (emptied when the cache is opened).
 */
public final class ObjectCache {

    private final ObjectStore store;
    private final long maxBytes;
    private final Path objects;
    private final Path tmp;

    /** Copies by digest in least recently used order; guarded by {@code this}, as are the fields below. */
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);

    private final Map<String, CompletableFuture<Entry>> fetching = new HashMap<>();
    private long bytes;

    /**
     * A cache in {@code dir} (created if missing) holding at most {@code maxBytes} of objects from {@code store};
     * copies left in it by an earlier process are kept, least recently modified first in line for removal.
     *
     * @throws IOException if the directory cannot be prepared
     */
    public ObjectCache(Path dir, long maxBytes, ObjectStore store) throws IOException {
        this.store = Objects.requireNonNull(store, "store");
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes must be >= 0");
        }
        this.maxBytes = maxBytes;
        Path root = Files.createDirectories(dir);
        this.objects = Files.createDirectories(root.resolve("objects"));
        this.tmp = Files.createDirectories(root.resolve("tmp"));
        try (DirectoryStream<Path> leftovers = Files.newDirectoryStream(tmp)) {
            for (Path leftover : leftovers) {
                Files.delete(leftover);
            }
        }
        List<Entry> found = new ArrayList<>();
        try (DirectoryStream<Path> copies = Files.newDirectoryStream(objects)) {
            for (Path copy : copies) {
                BasicFileAttributes attrs = Files.readAttributes(copy, BasicFileAttributes.class, NOFOLLOW_LINKS);
                String name = copy.getFileName().toString();
                if (!attrs.isRegularFile() || !ObjectInfo.isSha256(name)) {
                    throw new IOException(
                            copy + " is not a cached object; the cache directory holds only its own files");
                }
                found.add(new Entry(name, copy, attrs.size(), false, attrs.lastModifiedTime()));
            }
        }
        found.sort(Comparator.comparing(e -> e.lastUsed));
        List<Path> removed;
        synchronized (this) {
            for (Entry entry : found) {
                entries.put(entry.sha256, entry);
                bytes += entry.size;
            }
            removed = evict();
        }
        delete(removed);
    }

    /**
     * The local copy of {@code key}'s current content (one {@code stat} of the store, then the cache).
     *
     * @throws ObjectStoreException.NotFound if there is no such object
     * @throws ObjectStoreException.Failed if the object changed between the stat and the fetch
     */
    public Lease acquire(ObjectKey key) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        ObjectInfo info = store.stat(key).orElseThrow(() -> new ObjectStoreException.NotFound(key));
        return acquire(key, info.sha256());
    }

    /**
     * The local copy of the content with digest {@code sha256}, fetched from {@code key} unless it is cached. Release
     * it with {@link Lease#close()} once the file is no longer read.
     *
     * @throws ObjectStoreException.Failed if the object under {@code key} has another digest
     */
    public Lease acquire(ObjectKey key, String sha256) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        if (!ObjectInfo.isSha256(sha256)) {
            throw new IllegalArgumentException("sha256 must be 64 lowercase hex digits");
        }
        while (true) {
            CompletableFuture<Entry> fetch;
            Entry unverified = null;
            Entry hit = null;
            boolean mine = false;
            synchronized (this) {
                Entry entry = entries.get(sha256);
                if (entry != null && entry.verified) {
                    entry.users++;
                    hit = entry;
                }
                fetch = hit != null ? null : fetching.get(sha256);
                if (hit == null && fetch == null) {
                    fetch = new CompletableFuture<>();
                    fetching.put(sha256, fetch);
                    mine = true;
                    if (entry != null) {
                        unverified = entry;
                        entry.users++; // not evicted while it is checked
                    }
                }
            }
            if (hit != null) {
                touch(hit.file);
                return new Lease(hit);
            }
            if (mine) {
                return fetch(key, sha256, fetch, unverified);
            }
            await(key, fetch); // then take it from the map (unless it was removed meanwhile: then fetch again)
        }
    }

    /** How many bytes of copies the cache holds now. */
    public synchronized long sizeBytes() {
        return bytes;
    }

    /** The digests of the copies the cache holds, least recently used first. */
    public synchronized List<String> digests() {
        return List.copyOf(entries.keySet());
    }

    /**
     * This thread's fetch of {@code sha256}: a copy left by an earlier process ({@code unverified}, pinned by the
     * caller) is hashed and kept if it matches; otherwise the object is fetched from the store.
     */
    private Lease fetch(ObjectKey key, String sha256, CompletableFuture<Entry> fetch, Entry unverified)
            throws ObjectStoreException {
        try {
            if (unverified != null) {
                boolean intact = intact(unverified);
                synchronized (this) {
                    if (intact) {
                        unverified.verified = true;
                        fetching.remove(sha256);
                    } else {
                        entries.remove(sha256);
                        bytes -= unverified.size;
                    }
                }
                if (intact) {
                    fetch.complete(unverified);
                    return new Lease(unverified);
                }
                Transfers.deleteQuietly(unverified.file);
            }
            Entry entry = download(key, sha256);
            List<Path> removed;
            synchronized (this) {
                fetching.remove(sha256);
                entries.put(sha256, entry);
                bytes += entry.size;
                entry.users++;
                removed = evict();
            }
            fetch.complete(entry);
            delete(removed);
            return new Lease(entry);
        } catch (ObjectStoreException | RuntimeException e) {
            synchronized (this) {
                fetching.remove(sha256);
                if (unverified != null) {
                    unverified.users--;
                }
            }
            fetch.completeExceptionally(e);
            throw e;
        }
    }

    /** Whether a copy left by an earlier process still has its digest. */
    private static boolean intact(Entry entry) throws ObjectStoreException {
        try {
            return sha256(entry.file).equals(entry.sha256);
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("checking the cached copy of " + entry.sha256 + ": " + e, e);
        }
    }

    /** Fetches {@code key} into the cache as {@code sha256}, which its content must have. */
    private Entry download(ObjectKey key, String sha256) throws ObjectStoreException {
        Path temp = tmp.resolve(UUID.randomUUID().toString());
        try {
            ObjectInfo info = store.get(key, temp);
            if (!info.sha256().equals(sha256)) {
                throw new ObjectStoreException.Failed(
                        key + " holds sha256 " + info.sha256() + ", not the " + sha256 + " asked for (changed?)");
            }
            Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("r--r--r--"));
            Path copy = objects.resolve(sha256);
            Files.move(temp, copy, StandardCopyOption.ATOMIC_MOVE);
            return new Entry(sha256, copy, info.size(), true, FileTime.fromMillis(0));
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("caching " + key + ": " + e, e);
        } finally {
            Transfers.deleteQuietly(temp);
        }
    }

    /** Waits for another thread's fetch; its failure is thrown here as a failure of the same kind. */
    private static void await(ObjectKey key, CompletableFuture<Entry> fetch) throws ObjectStoreException {
        try {
            fetch.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ObjectStoreException.Failed("interrupted while " + key + " was fetched", e);
        } catch (ExecutionException e) {
            throw switch (e.getCause()) {
                case ObjectStoreException.NotFound notFound -> new ObjectStoreException.NotFound(key);
                case ObjectStoreException.Corrupt corrupt -> new ObjectStoreException.Corrupt(corrupt.getMessage());
                case ObjectStoreException.Unavailable unavailable ->
                    new ObjectStoreException.Unavailable(unavailable.getMessage(), unavailable);
                case Throwable other -> new ObjectStoreException.Failed(other.getMessage(), other);
            };
        }
    }

    /**
     * Takes the least recently used copies that are not in use out of the cache until it is within its bound,
     * moving their files into {@code tmp/} (so a fetch of the same digest can put a new copy in place at once).
     * Called with the lock held; the caller deletes the returned files after releasing it.
     */
    private List<Path> evict() {
        List<Path> removed = new ArrayList<>();
        Iterator<Entry> eldestFirst = entries.values().iterator();
        while (bytes > maxBytes && eldestFirst.hasNext()) {
            Entry entry = eldestFirst.next();
            if (entry.users > 0) {
                continue;
            }
            Path doomed = tmp.resolve("evicted-" + UUID.randomUUID());
            try {
                Files.move(entry.file, doomed, StandardCopyOption.ATOMIC_MOVE);
                removed.add(doomed);
            } catch (IOException e) {
                continue; // left in place and in the cache; tried again at the next eviction
            }
            eldestFirst.remove();
            bytes -= entry.size;
        }
        return removed;
    }

    private static void delete(List<Path> files) {
        for (Path file : files) {
            Transfers.deleteQuietly(file);
        }
    }

    private void release(Entry entry) {
        List<Path> removed;
        synchronized (this) {
            entry.users--;
            removed = evict();
        }
        delete(removed);
    }

    /** Marks a copy as just used, for the order of removal after a restart. */
    private static void touch(Path file) {
        try {
            Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis()));
        } catch (IOException ignored) {
            // the order after a restart is a hint
        }
    }

    private static String sha256(Path file) throws IOException {
        MessageDigest digest = Sha256.newDigest();
        try (InputStream in = Files.newInputStream(file, NOFOLLOW_LINKS)) {
            byte[] buffer = new byte[1 << 16];
            int n;
            while ((n = in.read(buffer)) > 0) {
                digest.update(buffer, 0, n);
            }
        }
        return Sha256.hex(digest.digest());
    }

    /** A copy in the cache; {@code users} and {@code verified} are guarded by the cache's lock. */
    private static final class Entry {
        final String sha256;
        final Path file;
        final long size;
        final FileTime lastUsed;
        boolean verified;
        int users;

        Entry(String sha256, Path file, long size, boolean verified, FileTime lastUsed) {
            this.sha256 = sha256;
            this.file = file;
            this.size = size;
            this.verified = verified;
            this.lastUsed = lastUsed;
        }
    }

    /** The use of one cached copy: it is not removed until this is closed. */
    public final class Lease implements AutoCloseable {
        private final Entry entry;
        private final AtomicBoolean released = new AtomicBoolean();

        private Lease(Entry entry) {
            this.entry = entry;
        }

        /** The copy, read-only. */
        public Path path() {
            return entry.file;
        }

        /** The copy's SHA-256. */
        public String sha256() {
            return entry.sha256;
        }

        /** The copy's size in bytes. */
        public long size() {
            return entry.size;
        }

        /** Releases the copy (once; later calls do nothing). */
        @Override
        public void close() {
            if (released.compareAndSet(false, true)) {
                release(entry);
            }
        }
    }
}
