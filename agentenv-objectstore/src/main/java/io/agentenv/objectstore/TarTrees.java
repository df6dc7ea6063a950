package io.agentenv.objectstore;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Sandbox state trees (checkpoints, snapshot layers) as single objects, packed and unpacked by GNU tar.
 *
 * <p>Such trees hold what {@link DirectoryArchives} refuses on purpose: a sandbox's disk image (a sparse file many
 * times larger than its data, which must stay sparse), overlay whiteouts (character devices 0/0) and the
 * {@code trusted.overlay.*} attributes of captured upper dirs, owned by the sandboxes' mapped ids. GNU tar keeps all
 * of them ({@code --sparse}, {@code --xattrs --xattrs-include=*}, {@code --numeric-owner}); the archive is written to a
 * temporary file first, so a store that reads its input twice (the S3 store hashes, then uploads) reads the same
 * bytes.
 *
 * <p>{@link #get} downloads to a temporary file, which the store checks against the size and SHA-256 recorded at put,
 * before tar reads a byte of it; it unpacks into a fresh directory beside the target and renames that into place, so
 * the target appears complete or not at all. The archive was made by tar from a real directory of this project's, so
 * it holds no {@code ..} names nor names beneath a link of its own; GNU tar refuses both anyway. Run as root (owners,
 * devices and {@code trusted.*} attributes need it).
 */
public final class TarTrees {

    private static final long TAR_TIMEOUT_SECONDS = 600;
    private static final int MAX_ERROR_CHARS = 2000;

    private final ObjectStore store;
    private final Path scratch;

    /**
     * Trees in {@code store}, with temporary archives in {@code scratch} (created when missing; on the same file system
     * as the targets of {@link #get} keeps the disk's copies cheap).
     */
    public TarTrees(ObjectStore store, Path scratch) {
        this.store = requireNonNull(store, "store");
        this.scratch = requireNonNull(scratch, "scratch").toAbsolutePath();
    }

    /**
     * Packs {@code dir} (which must not change meanwhile) into the object {@code key}.
     *
     * @return the object's size and SHA-256
     * @throws ObjectStoreException.Failed if {@code dir} is not a directory or tar fails
     */
    public ObjectInfo put(ObjectKey key, Path dir) throws ObjectStoreException {
        requireNonNull(key, "key");
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new ObjectStoreException.Failed("pack " + dir + ": not a directory");
        }
        Path archive = temporary("put");
        try {
            tar(List.of(
                    "--create",
                    "--file=" + archive,
                    "--directory=" + dir.toAbsolutePath(),
                    "--format=posix",
                    "--sparse",
                    "--xattrs",
                    "--xattrs-include=*",
                    "--numeric-owner",
                    "--sort=name",
                    "--pax-option=delete=atime,delete=ctime",
                    "."));
            return store.put(key, archive);
        } finally {
            Transfers.deleteQuietly(archive);
        }
    }

    /**
     * Unpacks the object {@code key} as {@code target}, which must not exist; its parent is created when missing.
     *
     * @return the object's size and SHA-256
     * @throws ObjectStoreException.NotFound if there is no such object
     * @throws ObjectStoreException.Corrupt if its bytes are not the ones put (nothing was unpacked)
     * @throws ObjectStoreException.Failed if {@code target} exists or tar fails (nothing is left behind)
     */
    public ObjectInfo get(ObjectKey key, Path target) throws ObjectStoreException {
        requireNonNull(key, "key");
        Path absolute = target.toAbsolutePath();
        if (Files.exists(absolute, LinkOption.NOFOLLOW_LINKS)) {
            throw new ObjectStoreException.Failed("unpack " + key + ": " + absolute + " exists");
        }
        Path archive = temporary("get");
        Path fresh = null;
        try {
            ObjectInfo info = store.get(key, archive);
            Path parent = Files.createDirectories(absolute.getParent());
            fresh = Files.createDirectory(parent.resolve(".unpack-" + UUID.randomUUID()));
            tar(List.of(
                    "--extract",
                    "--file=" + archive,
                    "--directory=" + fresh,
                    "--xattrs",
                    "--xattrs-include=*",
                    "--numeric-owner",
                    "--same-permissions",
                    "--same-owner"));
            Files.move(fresh, absolute, StandardCopyOption.ATOMIC_MOVE);
            fresh = null;
            return info;
        } catch (FileAlreadyExistsException e) {
            throw new ObjectStoreException.Failed("unpack " + key + ": " + absolute + " appeared meanwhile", e);
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("unpack " + key + " into " + absolute + ": " + e, e);
        } finally {
            Transfers.deleteQuietly(archive);
            if (fresh != null) {
                deleteTreeQuietly(fresh);
            }
        }
    }

    private Path temporary(String purpose) throws ObjectStoreException {
        try {
            Files.createDirectories(scratch);
            return scratch.resolve(".tar-" + purpose + "-" + UUID.randomUUID());
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("cannot create " + scratch + ": " + e, e);
        }
    }

    private static void tar(List<String> arguments) throws ObjectStoreException {
        List<String> command = new ArrayList<>();
        command.add("tar");
        command.addAll(arguments);
        Process process;
        try {
            process = new ProcessBuilder(command)
                    .redirectInput(
                            ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("cannot run tar: " + e, e);
        }
        String errors;
        try (InputStream stderr = process.getErrorStream()) {
            errors = new String(stderr.readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(TAR_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new ObjectStoreException.Failed("tar did not finish within " + TAR_TIMEOUT_SECONDS + " s");
            }
        } catch (IOException e) {
            process.destroyForcibly();
            throw new ObjectStoreException.Failed("tar failed: " + e, e);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new ObjectStoreException.Failed("interrupted while tar ran", e);
        }
        if (process.exitValue() != 0) {
            String message = errors.strip();
            if (message.length() > MAX_ERROR_CHARS) {
                message = message.substring(0, MAX_ERROR_CHARS) + "...";
            }
            throw new ObjectStoreException.Failed("tar exited with " + process.exitValue() + ": " + message);
        }
    }

    /** Deletes a half-unpacked tree; a failure leaves it for the owner of its parent dir to sweep. */
    private static void deleteTreeQuietly(Path dir) {
        try {
            Transfers.deleteTree(dir);
        } catch (IOException | UncheckedIOException e) {
            // see above
        }
    }
}
