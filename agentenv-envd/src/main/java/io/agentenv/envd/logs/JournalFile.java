package io.agentenv.envd.logs;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.http.RestJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A copy of the {@link LogJournal}'s entries as JSON lines (each line one entry as {@code GET /logs} serves it:
 * {@code seq, timestamp, source, level, pid?, stream, message}) in a file of the sandbox's own filesystem, so the host
 * can keep a paused sandbox's logs by reading that file once the sandbox is stopped, instead of asking envd over the
 * network just before the checkpoint.
 *
 * <p>Bounded: once the entries in the file cost {@code budget} as the in-memory journal counts them
 * ({@code LogJournal.Entry#cost}), or the file reaches {@value #BYTES_PER_BUDGET} times {@code budget} bytes, it is
 * renamed to {@code <name>.1} (replacing the previous one). So the two files hold at least every entry the in-memory
 * journal with the same budget still keeps (unless lines are pathologically longer than their cost: control
 * characters escaped six bytes each), and at most about {@value #BYTES_PER_BUDGET} × 2 × {@code budget} bytes.
 *
 * <p>The file is opened for every line and closed again ({@code O_APPEND}): envd never holds it open, so a checkpoint
 * never records it (CRIU checks an open file's size at restore, and a file the sandbox's root deleted while it was open
 * would have to be dumped whole), and a fork child or template restore simply appends to its own copy. A line is one
 * {@code write}; lines of concurrent appends may land out of order, so readers sort by {@code seq}. Writes and the
 * rotation take a lock of their own (never the journal's), held for one local append to the page cache.
 *
 * <p>The sandbox's root can replace the file: anything but a regular file (a symlink, a FIFO that would block the
 * open, a directory) is left alone and the line is dropped, as is a line that cannot be written (a full disk). Nothing
 * is logged about it: envd's log goes into this journal.
 */
public final class JournalFile {
    /** The file is rotated at this many bytes per byte of budget at the latest. */
    static final int BYTES_PER_BUDGET = 4;

    private final Path file;
    private final Path previous;
    private final long budget;
    private final ReentrantLock lock = new ReentrantLock();
    private long costInFile; // guarded by lock

    private JournalFile(Path file, long budget) {
        this.file = requireNonNull(file, "file is null");
        this.previous = file.resolveSibling(file.getFileName() + ".1");
        if (budget < 1024) {
            throw new IllegalArgumentException("budget must be at least 1024: " + budget);
        }
        this.budget = budget;
    }

    /**
     * A fresh journal file at {@code file} (an absolute path): creates its directory, removes what an earlier envd
     * left there (the journal starts empty at every envd start, as the in-memory one does; a restored envd is not
     * started, it keeps its file).
     */
    public static JournalFile create(Path file, long budget) throws IOException {
        if (!file.isAbsolute() || file.getFileName() == null) {
            throw new IllegalArgumentException("journal file must be an absolute file path: " + file);
        }
        JournalFile journal = new JournalFile(file, budget);
        Files.createDirectories(file.getParent());
        Files.deleteIfExists(file);
        Files.deleteIfExists(journal.previous);
        return journal;
    }

    /**
     * {@link #create}, or empty (with a line on stderr) when the file cannot be set up: envd then runs without it rather
     * than not at all (its supervisor would start it again and again), and the host finds no journal file.
     */
    public static Optional<JournalFile> open(Path file, long budget) {
        try {
            return Optional.of(create(file, budget));
        } catch (IOException e) {
            System.err.println("envd: no journal file at " + file + ": " + e);
            return Optional.empty();
        }
    }

    public Path path() {
        return file;
    }

    /** Appends one entry's line; drops it when the file cannot be written (see the class comment). */
    void append(LogJournal.Entry entry) {
        byte[] line = line(entry);
        lock.lock();
        try {
            if (!writable()) {
                return;
            }
            long size;
            try (FileChannel out = openForAppend()) {
                out.write(ByteBuffer.wrap(line));
                size = out.size();
            }
            costInFile += entry.cost();
            if (costInFile >= budget || size >= BYTES_PER_BUDGET * budget) {
                Files.move(file, previous, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                costInFile = 0;
            }
        } catch (IOException | UncheckedIOException e) {
            // dropped: a full disk, a removed directory, a file replaced meanwhile
        } finally {
            lock.unlock();
        }
    }

    /**
     * Opens the file for appending and closes it again, writing nothing (it is made when absent; anything but a regular
     * file is left alone, as by {@link #append}). In a sandbox restored from a template's checkpoint the file is in the
     * overlay's lower layer, and the first open for writing copies it up: a copy and a sync of the sandbox's disk
     * (ext4 on a loop device, so a flush of its image on the host), measured as ~1 ms of CPU and a disk flush in the
     * first journal line after a claim. Done at every init ({@code LogJournal#prepareFile}), so a warm pool's init
     * takes that cost before anyone claims the sandbox; on a file already copied up it is an open and a close.
     */
    void touch() {
        lock.lock();
        try {
            if (writable()) {
                openForAppend().close();
            }
        } catch (IOException | UncheckedIOException e) {
            // as for a line: the next append tries again
        } finally {
            lock.unlock();
        }
    }

    /**
     * Replaces the file's lines with these entries' (and drops the rotated file): for {@link LogJournal#discardFrom}.
     * Written to a sibling and renamed over the file; a failure leaves the file as it was.
     */
    void replace(List<LogJournal.Entry> entries) {
        Path temporary = file.resolveSibling(file.getFileName() + ".new");
        lock.lock();
        try {
            long cost = 0;
            try (FileChannel out = FileChannel.open(
                    temporary,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS)) {
                for (LogJournal.Entry entry : entries) {
                    out.write(ByteBuffer.wrap(line(entry)));
                    cost += entry.cost();
                }
            }
            Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            Files.deleteIfExists(previous);
            costInFile = cost;
        } catch (IOException | UncheckedIOException e) {
            try {
                Files.deleteIfExists(temporary);
            } catch (IOException ignored) {
                // nothing more to do: the journal file itself is unchanged
            }
        } finally {
            lock.unlock();
        }
    }

    /** The file opened for appending (made when absent), never through a symlink. */
    private FileChannel openForAppend() throws IOException {
        return FileChannel.open(
                file,
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND,
                StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS);
    }

    /** Absent (it is created) or a regular file; never a symlink, FIFO, device or directory. */
    private boolean writable() {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                    .isRegularFile();
        } catch (java.nio.file.NoSuchFileException absent) {
            try {
                Files.createDirectories(file.getParent()); // removed by the sandbox's user: made again
                return true;
            } catch (IOException e) {
                return false;
            }
        } catch (IOException e) {
            return false;
        }
    }

    /** The entry as one JSON line, with the field names of {@code GET /logs}. */
    static byte[] line(LogJournal.Entry e) {
        return (RestJson.logEntry(e.toWire()) + '\n').getBytes(StandardCharsets.UTF_8);
    }
}
