package io.agentenv.backend.container.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.CommandFailedException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Empty, formatted sandbox disk images made ahead of need, so a sandbox that needs a new disk (a create without a warm
 * member, a fork child, a snapshot restore, a warm-pool refill) takes one with a rename instead of waiting for
 * {@code mkfs.ext4} (~12 ms of CPU, ~20-30 ms on a busy host; bench/container/disk.sh). Up to {@code perSize} images
 * are kept per disk size, in {@code <dir>/<size MiB>/<uuid>.img}, on the sandboxes' filesystem (so the take is a
 * rename). The default size is kept from the start; another size from its first miss on (at most {@link #MAX_SIZES}).
 *
 * <p>One background virtual thread refills after each take, with {@code mkfs.ext4} under {@code nice} so it yields to
 * the sandboxes' own work. An image is made as {@code .partial-<uuid>.img} and renamed when complete; the ready ones
 * are in a queue per size, and a take removes its image from the queue before it moves it, so no image is ever handed
 * out twice. At start-up ({@link #start}) partial images a crashed server left are removed and complete ones of a
 * size in use are kept; {@link #close} stops the refill and removes every image. A failed refill is logged and tried
 * again at the next take, never in a loop.
 */
public final class SpareDisks implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SpareDisks.class);
    /** Disk sizes kept at once at most (sandboxes of snapshots or paused states taken with other settings add sizes). */
    static final int MAX_SIZES = 4;
    private static final String PARTIAL = ".partial-";
    private static final String SUFFIX = ".img";
    private static final Object WAKE = new Object();

    /** Makes one formatted image file (in the background: at low priority). */
    @FunctionalInterface
    public interface Format {
        void make(Path image, int sizeMiB) throws IOException, CommandFailedException, InterruptedException;
    }

    private final Format format;
    private final Path dir;
    private final int perSize;
    private final Map<Integer, Deque<Path>> ready = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<Object> wakeups = new LinkedBlockingQueue<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Object newSizes = new Object();
    private volatile Thread refiller;

    /**
     * @param perSize images kept per size; 0 keeps none (every new disk is made when needed)
     */
    public SpareDisks(Format format, Path dir, int perSize) {
        this.format = requireNonNull(format, "format is null");
        this.dir = requireNonNull(dir, "dir is null");
        if (perSize < 0) {
            throw new IllegalArgumentException("perSize must be >= 0: " + perSize);
        }
        this.perSize = perSize;
    }

    /**
     * Reconciles {@code dir} with what a previous run left (partial images and sizes other than {@code defaultSize}
     * removed, complete images of {@code defaultSize} kept) and starts keeping {@code defaultSize} filled.
     */
    public void start(int defaultSizeMiB) throws IOException {
        SandboxDisks.checkSize(defaultSizeMiB);
        Files.createDirectories(dir);
        try (Stream<Path> sizes = Files.list(dir)) {
            for (Path sizeDir : sizes.toList()) {
                if (perSize > 0 && sizeDir.getFileName().toString().equals(Integer.toString(defaultSizeMiB))) {
                    keepComplete(sizeDir, defaultSizeMiB);
                } else {
                    removeAll(sizeDir);
                }
            }
        }
        if (perSize > 0) {
            ready.computeIfAbsent(defaultSizeMiB, s -> new ConcurrentLinkedDeque<>());
            refiller = Thread.ofVirtual().name("aenv-spare-disks").start(this::refillUntilClosed);
            wakeups.offer(WAKE);
        }
    }

    /**
     * Moves a ready image of {@code sizeMiB} to {@code target} (which must not exist) and returns true; false when none
     * is ready (the caller makes one), which also starts keeping that size.
     */
    boolean take(int sizeMiB, Path target) {
        if (perSize == 0 || closed.get()) {
            return false;
        }
        Deque<Path> images = ready.get(sizeMiB);
        if (images == null) {
            if (keep(sizeMiB)) {
                wakeups.offer(WAKE);
            }
            return false;
        }
        for (Path image = images.pollFirst(); image != null; image = images.pollFirst()) {
            try {
                Files.move(image, target, StandardCopyOption.ATOMIC_MOVE);
                wakeups.offer(WAKE);
                return true;
            } catch (IOException e) { // another filesystem (then no image ever moves) or the image vanished
                log.atWarn().addKeyValue("image", image).addKeyValue("target", target).setCause(e)
                        .log("cannot move a spare disk image; making the disk instead");
                deleteQuietly(image);
                return false;
            }
        }
        wakeups.offer(WAKE);
        return false;
    }

    /**
     * Starts keeping {@code sizeMiB} unless {@link #MAX_SIZES} are kept already; true if it is new. The count and the
     * insertion are one step (under a lock held for no I/O), so concurrent first takes of new sizes cannot exceed it.
     */
    private boolean keep(int sizeMiB) {
        synchronized (newSizes) {
            return ready.size() < MAX_SIZES && ready.putIfAbsent(sizeMiB, new ConcurrentLinkedDeque<>()) == null;
        }
    }

    /** Images of {@code sizeMiB} ready now. */
    public int ready(int sizeMiB) {
        Deque<Path> images = ready.get(sizeMiB);
        return images == null ? 0 : images.size();
    }

    /** The sizes kept. */
    List<Integer> sizes() {
        return List.copyOf(ready.keySet());
    }

    /** Stops the refill (waiting for an image being made) and removes every image. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Thread running = refiller;
        if (running != null) {
            running.interrupt();
            running.join();
        }
        ready.clear();
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> sizes = Files.list(dir)) {
                for (Path sizeDir : sizes.toList()) {
                    removeAll(sizeDir);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    private void refillUntilClosed() {
        while (!closed.get()) {
            try {
                wakeups.take();
                wakeups.clear();
                refill();
            } catch (InterruptedException e) {
                return; // closed
            }
        }
    }

    /** Makes images until every size has {@code perSize}; stops at the first failure (the next take retries). */
    private void refill() throws InterruptedException {
        for (Map.Entry<Integer, Deque<Path>> size : ready.entrySet()) {
            while (!closed.get() && size.getValue().size() < perSize) {
                Optional<Path> made = make(size.getKey());
                if (made.isEmpty()) {
                    return;
                }
                size.getValue().addLast(made.get());
            }
        }
    }

    private Optional<Path> make(int sizeMiB) throws InterruptedException {
        Path sizeDir = dir.resolve(Integer.toString(sizeMiB));
        String name = UUID.randomUUID().toString();
        Path partial = sizeDir.resolve(PARTIAL + name + SUFFIX);
        try {
            Files.createDirectories(sizeDir);
            format.make(partial, sizeMiB);
            Path complete = sizeDir.resolve(name + SUFFIX);
            Files.move(partial, complete, StandardCopyOption.ATOMIC_MOVE);
            return Optional.of(complete);
        } catch (IOException | CommandFailedException | RuntimeException e) {
            log.atWarn().addKeyValue("size_mib", sizeMiB).setCause(e).log("cannot make a spare disk image; retrying at the next take");
            deleteQuietly(partial);
            return Optional.empty();
        } catch (InterruptedException e) {
            deleteQuietly(partial);
            throw e;
        }
    }

    private void keepComplete(Path sizeDir, int sizeMiB) throws IOException {
        Deque<Path> images = ready.computeIfAbsent(sizeMiB, s -> new ConcurrentLinkedDeque<>());
        try (Stream<Path> files = Files.list(sizeDir)) {
            for (Path file : files.toList()) {
                String name = file.getFileName().toString();
                boolean complete = !name.startsWith(PARTIAL) && name.endsWith(SUFFIX)
                        && Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) && Files.size(file) == (long) sizeMiB << 20;
                if (complete && images.size() < perSize) {
                    images.addLast(file);
                } else {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    private static void removeAll(Path sizeDir) throws IOException {
        if (!Files.isDirectory(sizeDir, LinkOption.NOFOLLOW_LINKS)) {
            Files.deleteIfExists(sizeDir);
            return;
        }
        List<Path> files = new ArrayList<>();
        try (Stream<Path> listed = Files.list(sizeDir)) {
            listed.forEach(files::add);
        }
        for (Path file : files) {
            Files.deleteIfExists(file);
        }
        Files.deleteIfExists(sizeDir);
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.atWarn().addKeyValue("image", file).setCause(e).log("cannot remove a spare disk image");
        }
    }
}
