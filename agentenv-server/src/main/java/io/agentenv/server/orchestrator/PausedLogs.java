package io.agentenv.server.orchestrator;

import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.SandboxId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static java.util.Objects.requireNonNull;

/**
 * envd's log journal kept with a paused state, so that the logs of a paused sandbox stay readable (E2B serves them
 * from its log store whatever the sandbox's state). Just before the checkpoint, the pause operation fetches the
 * journal (bounded by {@code budget}, {@code maxPages} pages and {@code maxBytes} of text) and writes it as the file
 * {@value #FILE} into the paused artifact directory, which the record refers to: it survives a server restart and is
 * deleted with the paused state. A resumed sandbox's envd still has its journal, so live reads lose nothing.
 *
 * <p>Best effort: a slow, failing or disconnected guest agent makes {@link #keep} return false within the budget and
 * the pause goes on; reading logs of that paused sandbox is then a conflict (resume it to read them).
 *
 * <p>The file format is the JDK's {@link DataOutputStream} encoding (the orchestrator sees no JSON library): a magic
 * line, the entry count, then each entry's fields; strings as int length + UTF-8. The guest agent's output is
 * untrusted, so every length read back is bounded.
 */
final class PausedLogs {
    private static final Logger log = LoggerFactory.getLogger(PausedLogs.class);
    static final String FILE = "guest-logs";
    private static final long MAGIC = 0x41454E564C4F4731L; // "AENVLOG1"
    private static final int PAGE = 1000;
    private static final int MAX_STRING_BYTES = 1 << 24;

    private final Duration budget;
    private final int maxPages;
    private final long maxBytes;

    /**
     * @param budget   the longest a fetch may take before the pause goes on without it
     * @param maxPages at most this many pages of {@value #PAGE} entries are fetched
     * @param maxBytes at most this many bytes of text are kept; later entries are left out
     */
    PausedLogs(Duration budget, int maxPages, long maxBytes) {
        this.budget = requireNonNull(budget, "budget is null");
        if (budget.isNegative() || budget.isZero()) {
            throw new IllegalArgumentException("budget must be positive: " + budget);
        }
        if (maxPages < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("maxPages and maxBytes must be >= 1");
        }
        this.maxPages = maxPages;
        this.maxBytes = maxBytes;
    }

    /** 500 ms, 64 pages, 8 MiB (envd's journal holds 1 MiB by default). */
    static PausedLogs defaults() {
        return new PausedLogs(Duration.ofMillis(500), 64, 8L << 20);
    }

    /**
     * Fetches the guest's journal within the budget and writes it into {@code dir}. Never throws; false (and a warning
     * in the log) when nothing was kept. Holds no lock; the fetch runs on a virtual thread that is interrupted when the
     * budget runs out (a call still blocked then ends with the instance's envd client, which the pause closes).
     */
    boolean keep(SandboxId id, Optional<EnvdApi> envd, Path dir) {
        requireNonNull(id, "id is null");
        requireNonNull(envd, "envd is null");
        requireNonNull(dir, "dir is null");
        long started = System.nanoTime();
        if (envd.isEmpty()) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).log("guest agent not connected; logs not kept at pause");
            return false;
        }
        FutureTask<List<EnvdLogEntry>> fetch = new FutureTask<>(() -> fetch(envd.get()));
        Thread.ofVirtual().name("aenv-pause-logs-" + id.value()).start(fetch);
        try {
            List<EnvdLogEntry> entries = fetch.get(budget.toNanos(), TimeUnit.NANOSECONDS);
            write(dir.resolve(FILE), entries);
            log.atInfo().addKeyValue("sandbox_id", id.value()).addKeyValue("entries", entries.size())
                    .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000).log("logs kept at pause");
            return true;
        } catch (TimeoutException e) {
            fetch.cancel(true);
            log.atWarn().addKeyValue("sandbox_id", id.value()).addKeyValue("budget_ms", budget.toMillis())
                    .log("guest agent's logs not fetched in time; logs not kept at pause");
        } catch (ExecutionException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e.getCause())
                    .log("guest agent's logs could not be fetched; logs not kept at pause");
        } catch (IOException | RuntimeException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("logs could not be written at pause");
        } catch (InterruptedException e) {
            fetch.cancel(true);
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /** The entries kept in {@code dir}, oldest first; empty when none were kept there (or the file is unreadable). */
    Optional<List<EnvdLogEntry>> read(SandboxId id, Path dir) {
        Path file = dir.resolve(FILE);
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
            return Optional.of(decode(in));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("kept logs are unreadable");
            return Optional.empty();
        }
    }

    private List<EnvdLogEntry> fetch(EnvdApi envd) throws EnvdException {
        List<EnvdLogEntry> out = new ArrayList<>();
        long cursor = 0;
        long bytes = 0;
        for (int page = 0; page < maxPages; page++) {
            EnvdLogPage read = envd.logs(cursor, PAGE);
            for (EnvdLogEntry e : read.entries()) {
                bytes += e.message().length() + e.stream().length() + e.level().length();
                if (bytes > maxBytes) {
                    return out;
                }
                out.add(e);
            }
            if (read.entries().size() < PAGE || read.nextCursor() <= cursor) {
                break;
            }
            cursor = read.nextCursor();
        }
        return out;
    }

    private static void write(Path file, List<EnvdLogEntry> entries) throws IOException {
        Path partial = file.resolveSibling(FILE + ".partial");
        try (OutputStream raw = Files.newOutputStream(partial);
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(raw))) {
            encode(entries, out);
        }
        Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    static void encode(List<EnvdLogEntry> entries, DataOutputStream out) throws IOException {
        out.writeLong(MAGIC);
        out.writeInt(entries.size());
        for (EnvdLogEntry e : entries) {
            out.writeLong(e.seq());
            out.writeLong(e.timestamp().getEpochSecond());
            out.writeInt(e.timestamp().getNano());
            out.writeByte(e.source().ordinal());
            writeString(out, e.level());
            out.writeInt(e.pid().orElse(-1));
            writeString(out, e.stream());
            writeString(out, e.message());
        }
    }

    static List<EnvdLogEntry> decode(DataInputStream in) throws IOException {
        if (in.readLong() != MAGIC) {
            throw new IOException("not a kept-logs file");
        }
        int count = in.readInt();
        if (count < 0) {
            throw new IOException("negative entry count");
        }
        List<EnvdLogEntry> entries = new ArrayList<>(Math.min(count, PAGE));
        try {
            for (int i = 0; i < count; i++) {
                long seq = in.readLong();
                Instant at = Instant.ofEpochSecond(in.readLong(), in.readInt());
                int source = in.readUnsignedByte();
                if (source >= EnvdLogEntry.Source.values().length) {
                    throw new IOException("unknown source " + source);
                }
                String level = readString(in);
                int pid = in.readInt();
                String stream = readString(in);
                String message = readString(in);
                entries.add(new EnvdLogEntry(seq, at, EnvdLogEntry.Source.values()[source], level,
                        pid < 0 ? OptionalInt.empty() : OptionalInt.of(pid), stream, message));
            }
        } catch (DateTimeException | IllegalArgumentException e) {
            throw new IOException("malformed entry", e);
        }
        return entries;
    }

    private static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    private static String readString(DataInputStream in) throws IOException {
        int length = in.readInt();
        if (length < 0 || length > MAX_STRING_BYTES) {
            throw new IOException("string length out of range: " + length);
        }
        byte[] bytes = readExactly(in, length);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] readExactly(InputStream in, int length) throws IOException {
        byte[] bytes = in.readNBytes(length);
        if (bytes.length != length) {
            throw new EOFException("truncated string");
        }
        return bytes;
    }
}
