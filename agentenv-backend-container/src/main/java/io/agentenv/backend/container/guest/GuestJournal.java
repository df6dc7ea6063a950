package io.agentenv.backend.container.guest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.backend.container.storage.GuestFileReads;
import io.agentenv.spi.EnvdLogEntry;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * envd's log journal file ({@code envd --journal-file}, {@link EnvdLayout#ENVD_JOURNAL}, rotated to {@code .1}) kept
 * with a paused state, so a paused sandbox's logs are read from disk instead of being fetched from envd just before
 * the checkpoint. {@link #keep} copies the tail of both files out of the stopped sandbox's root filesystem into the
 * artifact dir (where the pause's syncfs makes it durable); {@link #read} turns the copy into the entries envd's
 * {@code GET /logs} would have served at that moment: ordered by sequence number, and only the newest entries that fit
 * envd's journal budget, counted as envd counts them.
 *
 * <p>Everything in a sandbox's filesystem is untrusted: its root user can put a symlink (to a host path), a FIFO (an
 * open that never returns) or a huge file where the journal is. {@link #keep} runs only once no process of the
 * sandbox is left (after the dump killed them, or runc deleted the container), so nothing changes the tree while it
 * looks: every directory on the way must be a directory and the file a regular file, none of them a symlink
 * (checked without following links, and the file opened with {@code O_NOFOLLOW | O_NONBLOCK}, see
 * {@link GuestFileReads}; in the layers' own directories, so
 * the lowers, which are a snapshot's or template's captured uppers, are held to the same rule), and at most
 * {@link #MAX_COPY_PER_FILE} bytes of each file's end are copied. Lines that are not an entry are skipped.
 */
public final class GuestJournal {

    /** The kept copy, in the artifact dir. */
    public static final String FILE = "guest-journal.jsonl";
    /** envd's journal budget (its {@code --journal-bytes} default, not overridden by this backend); the file rotates by it. */
    static final int BUDGET = 1 << 20;
    /** envd rotates its file at 4 × its budget in bytes at the latest; a little more for the line that crossed it. */
    static final long MAX_COPY_PER_FILE = 4L * BUDGET + (64 << 10);

    private static final ObjectMapper JSON = new ObjectMapper();

    private GuestJournal() {}

    /**
     * Copies the journal's previous file, then its current one (each at most {@link #MAX_COPY_PER_FILE} from its end)
     * into {@code target}, each looked up through the layers of a stopped sandbox's filesystem as its overlay would
     * show it ({@code layers}: its upper dir first, then its lower dirs from the top; the first layer that has the
     * path decides, a whiteout or anything but a regular file hides it; opaque directories are not honoured). Reads
     * the layers' own directories, never the overlay mount. Returns the bytes copied, or empty
     * when there is no journal file (an envd without {@code --journal-file}) or the path is not a plain file.
     */
    public static Optional<Long> keep(List<Path> layers, Path target) throws IOException {
        String relative = EnvdLayout.ENVD_JOURNAL.substring(1);
        Optional<Path> current = throughLayers(layers, relative);
        if (current.isEmpty()) {
            return Optional.empty();
        }
        Optional<Path> previous = throughLayers(layers, relative + ".1");
        long copied = 0;
        try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            if (previous.isPresent()) {
                copied += copyTail(previous.get(), out);
                out.write(ByteBuffer.wrap(new byte[] {'\n'})); // a cut last line never joins the next file's first
            }
            copied += copyTail(current.get(), out);
        }
        return Optional.of(copied);
    }

    /** The regular file at {@code relative} in the first layer that has anything there; empty if none or not a file. */
    private static Optional<Path> throughLayers(List<Path> layers, String relative) throws IOException {
        for (Path layer : layers) {
            switch (lookup(layer, relative)) {
                case Lookup.Found(Path file) -> {
                    return Optional.of(file);
                }
                case Lookup.Hidden() -> {
                    return Optional.empty();
                }
                case Lookup.Absent() -> {
                    // look in the layer below
                }
            }
        }
        return Optional.empty();
    }

    /** The entries of a kept copy; empty when there is none (or it is not a regular file, or unreadable). */
    public static Optional<List<EnvdLogEntry>> read(Path kept) throws IOException {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(kept, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        if (!attributes.isRegularFile() || attributes.size() > 2 * MAX_COPY_PER_FILE + 1) {
            throw new IOException("not a kept journal: " + kept);
        }
        List<EnvdLogEntry> entries = new ArrayList<>();
        try (FileChannel in = FileChannel.open(kept, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
                BufferedReader lines = new BufferedReader(Channels.newReader(
                        in,
                        StandardCharsets.UTF_8
                                .newDecoder()
                                .onMalformedInput(CodingErrorAction.REPLACE)
                                .onUnmappableCharacter(CodingErrorAction.REPLACE),
                        -1))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                entry(line).ifPresent(entries::add);
            }
        }
        return Optional.of(newestWithinBudget(entries));
    }

    /**
     * Ordered by sequence number (lines of concurrent appends may be out of order; a repeated number keeps its first
     * line), and only the newest entries whose cost (envd's: 64 + message and stream length in chars) fits the budget,
     * at least one: exactly what envd's in-memory journal still holds.
     */
    static List<EnvdLogEntry> newestWithinBudget(List<EnvdLogEntry> entries) {
        List<EnvdLogEntry> ordered = new ArrayList<>(entries);
        ordered.sort(Comparator.comparingLong(EnvdLogEntry::seq)); // stable: of one number, the first line stays first
        List<EnvdLogEntry> unique = new ArrayList<>(ordered.size());
        for (EnvdLogEntry e : ordered) {
            if (unique.isEmpty() || unique.getLast().seq() != e.seq()) {
                unique.add(e);
            }
        }
        Deque<EnvdLogEntry> kept = new ArrayDeque<>();
        long cost = 0;
        for (int i = unique.size() - 1; i >= 0; i--) {
            EnvdLogEntry e = unique.get(i);
            cost += 64L + e.message().length() + e.stream().length();
            if (!kept.isEmpty() && cost > BUDGET) {
                break;
            }
            kept.addFirst(e);
        }
        return List.copyOf(kept);
    }

    /** One line as envd's {@code JournalFile} writes it (the fields of {@code GET /logs}); empty when it is not one. */
    static Optional<EnvdLogEntry> entry(String line) {
        if (line.isBlank()) {
            return Optional.empty();
        }
        try {
            JsonNode e = JSON.readTree(line);
            if (!e.isObject()
                    || !e.path("seq").canConvertToExactIntegral()
                    || !e.path("timestamp").isTextual()
                    || !e.path("source").isTextual()
                    || !e.path("level").isTextual()
                    || !e.path("stream").isTextual()
                    || !e.path("message").isTextual()) {
                return Optional.empty();
            }
            JsonNode pid = e.path("pid");
            OptionalInt process = pid.isMissingNode() || pid.isNull()
                    ? OptionalInt.empty()
                    : pid.canConvertToInt() ? OptionalInt.of(pid.asInt()) : null;
            if (process == null) {
                return Optional.empty();
            }
            return Optional.of(new EnvdLogEntry(
                    e.path("seq").asLong(),
                    Instant.parse(e.path("timestamp").asText()),
                    EnvdLogEntry.Source.valueOf(e.path("source").asText().toUpperCase(Locale.ROOT)),
                    e.path("level").asText(),
                    process,
                    e.path("stream").asText(),
                    e.path("message").asText()));
        } catch (IOException | DateTimeException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** What one layer has at a path. */
    sealed interface Lookup {
        /** A regular file, reached through directories only. */
        record Found(Path file) implements Lookup {}

        /** Something else is there: a symlink, a whiteout (a character device), a FIFO, a directory, a file on the way. */
        record Hidden() implements Lookup {}

        /** Nothing is there: the path is up to the layers below. */
        record Absent() implements Lookup {}
    }

    /**
     * Looks {@code relative} up below {@code root} without following any symlink: every part on the way must be a
     * directory and the last a regular file. Only for trees nothing changes meanwhile (see the class comment).
     */
    static Lookup lookup(Path root, String relative) throws IOException {
        Path current = root;
        String[] parts = relative.split("/");
        for (int i = 0; i < parts.length; i++) {
            if (parts[i].isEmpty() || parts[i].equals(".") || parts[i].equals("..")) {
                throw new IllegalArgumentException("not a plain relative path: " + relative);
            }
            current = current.resolve(parts[i]);
            BasicFileAttributes attributes;
            try {
                attributes = Files.readAttributes(current, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                return new Lookup.Absent();
            }
            boolean last = i == parts.length - 1;
            if (last ? !attributes.isRegularFile() : !attributes.isDirectory()) {
                return new Lookup.Hidden();
            }
        }
        return new Lookup.Found(current);
    }

    /** The last {@link #MAX_COPY_PER_FILE} bytes of {@code file}, through {@link GuestFileReads} (close-on-exec). */
    private static long copyTail(Path file, FileChannel out) throws IOException {
        return GuestFileReads.copyTail(file, MAX_COPY_PER_FILE, out);
    }
}
