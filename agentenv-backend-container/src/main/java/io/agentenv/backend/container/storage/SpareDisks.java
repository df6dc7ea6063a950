package io.agentenv.backend.container.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.pool.RefillingPool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
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
 * <p>The images are a {@link RefillingPool} keyed by size: one background virtual thread refills after each take, with
 * {@code mkfs.ext4} under {@code nice} so it yields to the sandboxes' own work. An image is made as {@code
 * .partial-<uuid>.img} and renamed when complete; the ready ones are in a queue per size, and a take removes its image
 * from the queue before it moves it, so no image is ever handed out twice. At start-up ({@link #start}) partial images
 * a crashed server left are removed and complete ones of a size in use are kept; {@link #close} stops the refill and
 * removes every image. A failed refill is logged and tried again at the next take, never in a loop.
 */
public final class SpareDisks implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SpareDisks.class);
    /** Disk sizes kept at once at most (sandboxes of snapshots or paused states taken with other settings add sizes). */
    static final int MAX_SIZES = 4;

    private static final String PARTIAL = ".partial-";
    private static final String SUFFIX = ".img";

    /** Makes one formatted image file (in the background: at low priority). */
    @FunctionalInterface
    public interface Format {
        void make(Path image, int sizeMiB) throws IOException, CommandFailedException, InterruptedException;
    }

    private final Format format;
    private final Path dir;
    private final int perSize;
    /** Ready images per size. */
    private final RefillingPool<Integer, Path> ready;

    private final AtomicBoolean closed = new AtomicBoolean();

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
        this.ready = new RefillingPool<>("aenv-spare-disks", perSize, new RefillingPool.Items<>() {
            @Override
            public Optional<Path> make(Integer sizeMiB) throws InterruptedException {
                return SpareDisks.this.make(sizeMiB);
            }

            @Override
            public void discard(Path image) {
                deleteQuietly(image);
            }
        });
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
            ready.keep(defaultSizeMiB);
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
        if (!ready.keeps(sizeMiB)) {
            ready.keep(
                    sizeMiB,
                    MAX_SIZES); // unless MAX_SIZES are kept already (one step: concurrent takes cannot exceed it)
            return false;
        }
        Optional<Path> image = ready.take(sizeMiB);
        if (image.isEmpty()) {
            return false;
        }
        try {
            Files.move(image.get(), target, StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (IOException e) { // another filesystem (then no image ever moves) or the image vanished
            log.atWarn()
                    .addKeyValue("image", image.get())
                    .addKeyValue("target", target)
                    .setCause(e)
                    .log("cannot move a spare disk image; making the disk instead");
            deleteQuietly(image.get());
            return false;
        }
    }

    /** Images of {@code sizeMiB} ready now. */
    public int ready(int sizeMiB) {
        return ready.ready(sizeMiB);
    }

    /** The sizes kept. */
    List<Integer> sizes() {
        return List.copyOf(ready.keys());
    }

    /** Stops the refill (waiting for an image being made) and removes every image. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        ready.close(true); // an image being made is removed by its make; the ready ones go with their dirs below
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> sizes = Files.list(dir)) {
                for (Path sizeDir : sizes.toList()) {
                    removeAll(sizeDir);
                }
            }
            Files.deleteIfExists(dir);
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
            log.atWarn()
                    .addKeyValue("size_mib", sizeMiB)
                    .setCause(e)
                    .log("cannot make a spare disk image; retrying at the next take");
            deleteQuietly(partial);
            return Optional.empty();
        } catch (InterruptedException e) {
            deleteQuietly(partial);
            throw e;
        }
    }

    private void keepComplete(Path sizeDir, int sizeMiB) throws IOException {
        ready.register(sizeMiB);
        try (Stream<Path> files = Files.list(sizeDir)) {
            for (Path file : files.toList()) {
                String name = file.getFileName().toString();
                boolean complete = !name.startsWith(PARTIAL)
                        && name.endsWith(SUFFIX)
                        && Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
                        && Files.size(file) == (long) sizeMiB << 20;
                if (complete && ready.ready(sizeMiB) < perSize) {
                    ready.add(sizeMiB, file);
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
