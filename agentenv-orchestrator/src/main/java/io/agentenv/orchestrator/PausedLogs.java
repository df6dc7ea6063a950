package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest agent's log journal of a paused sandbox, so that its logs stay readable while it is paused (E2B serves
 * them from its log store whatever the sandbox's state). The backend keeps the journal with the paused state, in the
 * artifact directory, without a call to the guest on the pause path ({@link PausedState#guestLogs()}: the container
 * backend reads envd's journal file out of the stopped sandbox's filesystem); it survives a server restart and is
 * deleted with the paused state. A resumed sandbox's envd still has its journal, so live reads lose nothing.
 *
 * <p>States paused by an earlier version of the server instead hold the file {@value #FILE}, which the orchestrator
 * itself wrote after fetching the journal from envd just before the checkpoint; it is still read. Its format is the
 * JDK's {@link DataOutputStream} encoding: a magic line, the entry count, then each entry's fields; strings as int
 * length + UTF-8. The guest agent's output is untrusted, so every length read back is bounded.
 *
 * <p>When neither is there (the guest's journal could not be read at pause), reading the logs of that paused sandbox
 * is a conflict (resume it to read them).
 */
final class PausedLogs {
    private static final Logger log = LoggerFactory.getLogger(PausedLogs.class);
    static final String FILE = "guest-logs";
    private static final long MAGIC = 0x41454E564C4F4731L; // "AENVLOG1"
    private static final int PAGE = 1000;
    private static final int MAX_STRING_BYTES = 1 << 24;

    private final SandboxBackendFactory backends;

    PausedLogs(SandboxBackendFactory backends) {
        this.backends = requireNonNull(backends, "backends is null");
    }

    /**
     * The entries kept with {@code paused}, oldest first; empty when none were kept (or they are unreadable, which is
     * logged). Reads files: never call it holding a lock.
     */
    Optional<List<EnvdLogEntry>> read(SandboxId id, StoredState paused) {
        requireNonNull(id, "id is null");
        requireNonNull(paused, "paused is null");
        try {
            Optional<List<EnvdLogEntry>> kept = backends.decodePausedState(paused.encoded(), paused.artifactDir())
                    .guestLogs();
            if (kept.isPresent()) {
                return kept;
            }
        } catch (BackendException | RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e)
                    .log("the paused state's logs are unreadable");
        }
        return readFile(id, paused.artifactDir());
    }

    /** The entries an earlier version kept in {@code dir}; empty when there is no such file (or it is unreadable). */
    private Optional<List<EnvdLogEntry>> readFile(SandboxId id, Path dir) {
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

    /** The format of {@value #FILE} (written by earlier versions; here for tests of the reading side). */
    @SuppressWarnings("EnumOrdinal") // the file names a source by its ordinal: Source's order is part of the format
    static void encode(List<EnvdLogEntry> entries, DataOutputStream out) throws IOException {
        out.writeLong(MAGIC);
        out.writeInt(entries.size());
        for (EnvdLogEntry e : entries) {
            out.writeLong(e.seq());
            Instant at = e.timestamp();
            out.writeLong(at.getEpochSecond());
            out.writeInt(at.getNano());
            out.writeByte(e.source().ordinal());
            writeString(out, e.level());
            out.writeInt(e.pid().orElse(-1));
            writeString(out, e.stream());
            writeString(out, e.message());
        }
    }

    @SuppressWarnings("EnumOrdinal") // as encode
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
                entries.add(new EnvdLogEntry(
                        seq,
                        at,
                        EnvdLogEntry.Source.values()[source],
                        level,
                        pid < 0 ? OptionalInt.empty() : OptionalInt.of(pid),
                        stream,
                        message));
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
