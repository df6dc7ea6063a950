package io.agentenv.backend.mock;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.Resources;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Encoded as {@code paused|<mode>|<cpu>|<memory>|<disk>|<sandbox id>}. The fake envd's journal at pause is kept in
 * {@value #GUEST_LOGS} in the artifact dir (as the container backend keeps envd's journal file), when it could be read.
 */
record MockPausedState(PauseMode mode, Resources resources, String sandboxId, Path artifactDir) implements PausedState {
    static final String GUEST_LOGS = "mock-guest-logs";

    MockPausedState {
        requireNonNull(mode, "mode is null");
        requireNonNull(resources, "resources is null");
        requireNonNull(sandboxId, "sandboxId is null");
        requireNonNull(artifactDir, "artifactDir is null");
    }

    @Override
    public byte[] encode() {
        return MockSandbox.utf8(String.join(
                "|",
                "paused",
                mode.name(),
                Integer.toString(resources.cpuCount()),
                Integer.toString(resources.memoryMiB()),
                Integer.toString(resources.diskSizeMiB()),
                sandboxId));
    }

    @Override
    public Optional<List<EnvdLogEntry>> guestLogs() {
        try (DataInputStream in =
                new DataInputStream(new BufferedInputStream(Files.newInputStream(artifactDir.resolve(GUEST_LOGS))))) {
            int count = in.readInt();
            List<EnvdLogEntry> entries = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                long seq = in.readLong();
                Instant at = Instant.ofEpochSecond(in.readLong(), in.readInt());
                EnvdLogEntry.Source source = EnvdLogEntry.Source.valueOf(in.readUTF());
                String level = in.readUTF();
                int pid = in.readInt();
                String stream = in.readUTF();
                String message = new String(in.readNBytes(in.readInt()), StandardCharsets.UTF_8);
                entries.add(new EnvdLogEntry(
                        seq, at, source, level, pid < 0 ? OptionalInt.empty() : OptionalInt.of(pid), stream, message));
            }
            return Optional.of(List.copyOf(entries));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("mock guest logs unreadable", e);
        }
    }

    /** Writes the fake envd's journal as it is now; a test double, so the format is the simplest there is. */
    static void keepGuestLogs(Path artifactDir, List<EnvdLogEntry> entries) throws IOException {
        try (DataOutputStream out = new DataOutputStream(
                new BufferedOutputStream(Files.newOutputStream(artifactDir.resolve(GUEST_LOGS))))) {
            out.writeInt(entries.size());
            for (EnvdLogEntry e : entries) {
                out.writeLong(e.seq());
                Instant at = e.timestamp();
                out.writeLong(at.getEpochSecond());
                out.writeInt(at.getNano());
                out.writeUTF(e.source().name());
                out.writeUTF(e.level());
                out.writeInt(e.pid().orElse(-1));
                out.writeUTF(e.stream());
                byte[] message = e.message().getBytes(StandardCharsets.UTF_8);
                out.writeInt(message.length);
                out.write(message);
            }
        }
    }

    static MockPausedState decode(byte[] encoded, Path artifactDir) throws BackendException {
        String[] parts = new String(encoded, StandardCharsets.UTF_8).split("\\|", -1);
        try {
            if (parts.length != 6 || !parts[0].equals("paused")) {
                throw new IllegalArgumentException("not a mock paused state");
            }
            return new MockPausedState(
                    PauseMode.valueOf(parts[1]),
                    new Resources(Integer.parseInt(parts[2]), Integer.parseInt(parts[3]), Integer.parseInt(parts[4])),
                    parts[5],
                    artifactDir);
        } catch (IllegalArgumentException e) {
            throw new BackendException.Terminal("cannot decode mock paused state", e);
        }
    }
}
