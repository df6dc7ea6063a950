package io.agentenv.envd.logs;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A bounded in-memory journal of envd's own log lines and of the processes' lifecycle and output, served to the host
 * by {@code GET /logs}. The oldest entries are dropped when the byte budget is exceeded; sequence numbers keep growing,
 * so a reader can tell what it missed. Optionally every entry is also written to a {@link JournalFile} in the
 * sandbox's filesystem, where the host reads a paused sandbox's logs.
 */
public final class LogJournal {
    /** Where an entry came from. */
    public enum Source {
        ENVD,
        PROCESS
    }

    /**
     * One journal entry.
     *
     * @param stream for process entries: {@code stdout}, {@code stderr}, {@code pty} or {@code event}; for envd: the logger
     */
    public record Entry(
            long seq, Instant time, Source source, String level, OptionalInt pid, String stream, String message) {
        /** The entry as {@code GET /logs} and the journal file show it. */
        public io.agentenv.envd.protocol.rest.LogEntry toWire() {
            return new io.agentenv.envd.protocol.rest.LogEntry(
                    seq,
                    time.toString(),
                    source.name().toLowerCase(java.util.Locale.ROOT),
                    level,
                    pid.isPresent() ? pid.getAsInt() : null,
                    stream,
                    message);
        }

        public Entry {
            requireNonNull(time, "time is null");
            requireNonNull(source, "source is null");
            requireNonNull(level, "level is null");
            requireNonNull(pid, "pid is null");
            requireNonNull(stream, "stream is null");
            requireNonNull(message, "message is null");
        }

        int cost() {
            return 64 + message.length() + stream.length();
        }
    }

    /** A page of entries and the cursor to continue from. */
    public record Page(List<Entry> entries, long nextCursor, long firstAvailable) {
        public Page {
            entries = List.copyOf(entries);
        }
    }

    private final Clock clock;
    private final Optional<JournalFile> copy;
    private final int maxBytes;
    private final int maxMessageChars;
    private final Object lock = new Object();
    private final Deque<Entry> entries = new ArrayDeque<>(); // guarded by lock
    private long nextSeq = 1; // guarded by lock
    private long bytes; // guarded by lock

    public LogJournal(Clock clock, int maxBytes) {
        this(clock, maxBytes, Optional.empty());
    }

    /** @param copy where every entry is also written as a JSON line ({@link JournalFile}), if anywhere */
    public LogJournal(Clock clock, int maxBytes, Optional<JournalFile> copy) {
        this.clock = requireNonNull(clock, "clock is null");
        this.copy = requireNonNull(copy, "copy is null");
        if (maxBytes < 1024) {
            throw new IllegalArgumentException("maxBytes must be at least 1024: " + maxBytes);
        }
        this.maxBytes = maxBytes;
        this.maxMessageChars = Math.max(256, maxBytes / 16);
    }

    public void envd(String level, String logger, String message) {
        append(Source.ENVD, level, OptionalInt.empty(), logger, message);
    }

    public void processEvent(int pid, String message) {
        append(Source.PROCESS, "INFO", OptionalInt.of(pid), "event", message);
    }

    public void processOutput(int pid, String stream, byte[] chunk, int length) {
        append(
                Source.PROCESS,
                "INFO",
                OptionalInt.of(pid),
                stream,
                new String(chunk, 0, length, StandardCharsets.UTF_8));
    }

    private void append(Source source, String level, OptionalInt pid, String stream, String message) {
        String text = message.length() > maxMessageChars
                ? message.substring(0, maxMessageChars) + "…[" + (message.length() - maxMessageChars) + " chars cut]"
                : message;
        Instant now = clock.instant();
        Entry entry;
        synchronized (lock) {
            entry = new Entry(nextSeq++, now, source, level, pid, stream, text);
            entries.addLast(entry);
            bytes += entry.cost();
            while (bytes > maxBytes && entries.size() > 1) {
                bytes -= entries.removeFirst().cost();
            }
        }
        if (copy.isPresent()) {
            copy.get().append(entry); // outside the journal's lock: a file write
        }
    }

    /** Makes the journal file ready for its next line without writing one ({@link JournalFile#touch}), if there is one. */
    public void prepareFile() {
        copy.ifPresent(JournalFile::touch);
    }

    /** The sequence number the next entry gets: what {@link #discardFrom} takes back to. */
    public long mark() {
        synchronized (lock) {
            return nextSeq;
        }
    }

    /**
     * Takes back every entry numbered {@code mark} or later, as if it had never been written: they leave memory, their
     * numbers are given out again, and the file copy is rewritten with the entries kept in memory. For envd's own
     * warm-up at a template's boot, while nothing else writes or reads the journal: an entry written concurrently may
     * be missing from the file, and a reader that saw a discarded entry would skip the one that reuses its number.
     */
    public void discardFrom(long mark) {
        List<Entry> kept;
        synchronized (lock) {
            if (mark < 1 || mark > nextSeq) {
                throw new IllegalArgumentException("mark " + mark + " is not between 1 and " + nextSeq);
            }
            while (!entries.isEmpty() && entries.peekLast().seq() >= mark) {
                bytes -= entries.removeLast().cost();
            }
            nextSeq = mark;
            kept = List.copyOf(entries);
        }
        if (copy.isPresent()) {
            copy.get().replace(kept); // outside the journal's lock: a file write
        }
    }

    /** Entries with {@code seq >= cursor}, oldest first, at most {@code limit}; optionally only one process. */
    public Page read(long cursor, int limit, OptionalInt pid) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive: " + limit);
        }
        List<Entry> page = new ArrayList<>();
        long next = cursor;
        long first;
        synchronized (lock) {
            first = entries.isEmpty() ? nextSeq : entries.peekFirst().seq();
            for (Entry e : entries) {
                if (e.seq() < cursor) {
                    continue;
                }
                if (page.size() == limit) {
                    break;
                }
                next = e.seq() + 1;
                if (pid.isEmpty() || (e.pid().isPresent() && e.pid().getAsInt() == pid.getAsInt())) {
                    page.add(e);
                }
            }
            if (page.size() < limit) {
                next = Math.max(next, nextSeq);
            }
        }
        return new Page(page, next, first);
    }
}
