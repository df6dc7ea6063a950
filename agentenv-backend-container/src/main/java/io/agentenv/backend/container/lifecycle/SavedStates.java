package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.backend.container.guest.GuestJournal;
import io.agentenv.backend.container.guest.GuestProcFiles;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SharedFiles;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.VolumeMount;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The paused and snapshot states of container sandboxes and their JSON form. The artifact directory holds
 * {@code images/} (CRIU, absent for a filesystem-only pause), {@code disk.img} (a paused sandbox's own disk, holding
 * its changes; a state paused by an older version has an {@code upper/} dir instead) and
 * {@code layers/<n>} (owned layers of the {@link Lineage}; for a snapshot layer 0 is the captured upper). The JSON holds
 * no paths into the artifact directory, which the orchestrator may place anywhere.
 */
public final class SavedStates {

    private static final Logger log = LoggerFactory.getLogger(SavedStates.class);
    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    private static final int VERSION = 1;

    private SavedStates() {}

    /** The JSON form of both states. */
    record Wire(
            int version,
            String kind,
            String mode,
            List<String> layers,
            String template,
            String envdDir,
            int cpuCount,
            int memoryMiB,
            int diskSizeMiB,
            String guestToken,
            String bootId,
            List<String> volumePaths,
            Map<String, String> files) {}

    /**
     * A paused sandbox: its disk image and owned layers moved into {@code artifactDir}, plus CRIU images WITH_MEMORY.
     * {@code bootId} is the boot id its resume keeps ({@link GuestProcFiles}): a pause with memory only; empty for a
     * filesystem-only pause (its resume is a new boot) and for states paused before sandboxes had their own.
     * {@code files} holds the key of each tree its lineage names outside the artifact dir ({@link LineageFiles}): empty
     * on a lone server, whose states stay on its disk.
     */
    public record Paused(
            PauseMode mode,
            Lineage lineage,
            Resources resources,
            Path artifactDir,
            Optional<String> bootId,
            List<String> volumePaths,
            Map<String, String> files)
            implements PausedState {
        public Paused {
            volumePaths = List.copyOf(volumePaths);
            files = Map.copyOf(files);
            requireNonNull(mode, "mode is null");
            requireNonNull(lineage, "lineage is null");
            requireNonNull(resources, "resources is null");
            requireNonNull(artifactDir, "artifactDir is null");
            requireNonNull(bootId, "bootId is null");
        }

        @Override
        public byte[] encode() {
            return write(new Wire(
                    VERSION,
                    "paused",
                    mode.name(),
                    lineage.layers(),
                    lineage.template().toString(),
                    lineage.envdDir().toString(),
                    resources.cpuCount(),
                    resources.memoryMiB(),
                    resources.diskSizeMiB(),
                    null,
                    bootId.orElse(null),
                    volumePaths.isEmpty() ? null : volumePaths,
                    files.isEmpty() ? null : files));
        }

        public Path images() {
            return artifactDir.resolve("images");
        }

        /** The sandbox's disk image (its own changes, and its size). */
        public Path diskImage() {
            return artifactDir.resolve("disk.img");
        }

        /** Where a paused state of an older version kept its upper dir (before sandboxes had their own disks). */
        Path upper() {
            return artifactDir.resolve("upper");
        }

        Path layers() {
            return artifactDir.resolve("layers");
        }

        /** envd's journal as the pause kept it ({@link GuestJournal}). */
        public Path guestJournal() {
            return artifactDir.resolve(GuestJournal.FILE);
        }

        /** Read from the kept journal; empty when none was kept (or it is unreadable: logged). */
        @Override
        public Optional<List<EnvdLogEntry>> guestLogs() {
            try {
                return GuestJournal.read(guestJournal());
            } catch (IOException | RuntimeException e) {
                log.atWarn()
                        .addKeyValue("artifact_dir", artifactDir.toString())
                        .setCause(e)
                        .log("the kept journal of a paused sandbox is unreadable");
                return Optional.empty();
            }
        }
    }

    /**
     * A snapshot: layer 0 is the source's upper, images its memory. {@code guestToken} is the token the source's envd
     * had when captured (a restored envd asks for it before it accepts a new one); it is stored with the state, in the
     * server's database, like the sandbox tokens themselves. {@code bootId} is the source's boot id, which the sandboxes
     * restored from it keep (they continue its memory); empty for snapshots taken before sandboxes had their own.
     * {@code files}: as for {@link Paused}.
     */
    public record Snapshot(
            Lineage lineage,
            Resources resources,
            Optional<AccessToken> guestToken,
            Path artifactDir,
            Optional<String> bootId,
            List<String> volumePaths,
            Map<String, String> files)
            implements SnapshotState {
        public Snapshot {
            volumePaths = List.copyOf(volumePaths);
            files = Map.copyOf(files);
            requireNonNull(lineage, "lineage is null");
            requireNonNull(resources, "resources is null");
            requireNonNull(guestToken, "guestToken is null");
            requireNonNull(artifactDir, "artifactDir is null");
            requireNonNull(bootId, "bootId is null");
        }

        @Override
        public byte[] encode() {
            return write(new Wire(
                    VERSION,
                    "snapshot",
                    null,
                    lineage.layers(),
                    lineage.template().toString(),
                    lineage.envdDir().toString(),
                    resources.cpuCount(),
                    resources.memoryMiB(),
                    resources.diskSizeMiB(),
                    guestToken.map(AccessToken::value).orElse(null),
                    bootId.orElse(null),
                    volumePaths.isEmpty() ? null : volumePaths,
                    files.isEmpty() ? null : files));
        }

        public Path images() {
            return artifactDir.resolve("images");
        }

        Path layers() {
            return artifactDir.resolve("layers");
        }
    }

    public static Paused decodePaused(byte[] encoded, Path artifactDir) throws BackendException {
        Wire wire = read(encoded, "paused");
        try {
            return new Paused(
                    PauseMode.valueOf(requireNonNull(wire.mode(), "mode")),
                    lineage(wire),
                    resources(wire),
                    absolute(artifactDir),
                    Optional.ofNullable(wire.bootId()),
                    volumePaths(wire),
                    files(wire));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new BackendException.Terminal("paused state is malformed: " + e.getMessage(), e);
        }
    }

    public static Snapshot decodeSnapshot(byte[] encoded, Path artifactDir) throws BackendException {
        Wire wire = read(encoded, "snapshot");
        try {
            return new Snapshot(
                    lineage(wire),
                    resources(wire),
                    Optional.ofNullable(wire.guestToken()).map(AccessToken::new),
                    absolute(artifactDir),
                    Optional.ofNullable(wire.bootId()),
                    volumePaths(wire),
                    files(wire));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new BackendException.Terminal("snapshot state is malformed: " + e.getMessage(), e);
        }
    }

    /** Fails when a state's files are not where they must be (a deleted artifact dir, a removed template build). */
    static void requirePresent(Lineage lineage, Path layersDir, Optional<Path> images) throws BackendException {
        for (Path lower : lineage.lowers(layersDir)) {
            if (!Files.isDirectory(lower)) {
                throw new BackendException.Terminal("a layer of this state is missing: " + lower);
            }
        }
        if (!Files.isRegularFile(lineage.envdDir().resolve("agentenv-envd.jar"))) {
            throw new BackendException.Terminal("the envd this state was taken with is missing: " + lineage.envdDir());
        }
        if (images.isPresent() && !Files.isDirectory(images.get())) {
            throw new BackendException.Terminal("the memory images of this state are missing: " + images.get());
        }
    }

    private static Path absolute(Path dir) {
        requireNonNull(dir, "artifactDir is null");
        if (!dir.isAbsolute()) {
            throw new IllegalArgumentException("artifactDir must be absolute: " + dir);
        }
        return dir;
    }

    /** Where {@code mounts} appear inside, in their order: what a state records of a sandbox's volumes. */
    static List<String> volumePaths(List<VolumeMount> mounts) {
        return mounts.stream().map(VolumeMount::guestPath).toList();
    }

    /** The volume paths of a state (none in one of an older version). */
    private static List<String> volumePaths(Wire wire) {
        return wire.volumePaths() == null ? List.of() : wire.volumePaths();
    }

    /** The keys of the trees a state names outside itself ({@link LineageFiles}); none in one of an older version. */
    private static Map<String, String> files(Wire wire) {
        if (wire.files() == null) {
            return Map.of();
        }
        for (String key : wire.files().values()) {
            if (!SharedFiles.isValidKey(key)) {
                throw new IllegalArgumentException("not a file key: " + key);
            }
        }
        return wire.files();
    }

    private static Lineage lineage(Wire wire) {
        return new Lineage(
                requireNonNull(wire.layers(), "layers"),
                Path.of(requireNonNull(wire.template(), "template")),
                Path.of(requireNonNull(wire.envdDir(), "envdDir")));
    }

    private static Resources resources(Wire wire) {
        return new Resources(wire.cpuCount(), wire.memoryMiB(), wire.diskSizeMiB());
    }

    private static byte[] write(Wire wire) {
        try {
            return JSON.writeValueAsBytes(wire);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("state did not serialize", e); // strings and numbers only: a bug
        }
    }

    private static Wire read(byte[] encoded, String kind) throws BackendException {
        Wire wire;
        try {
            wire = JSON.readValue(requireNonNull(encoded, "encoded is null"), Wire.class);
        } catch (IOException e) {
            throw new BackendException.Terminal("not a container " + kind + " state: " + e.getMessage(), e);
        }
        if (wire.version() != VERSION || !kind.equals(wire.kind())) {
            throw new BackendException.Terminal(
                    "not a container " + kind + " state (version " + wire.version() + ", kind " + wire.kind() + ")");
        }
        return wire;
    }
}
