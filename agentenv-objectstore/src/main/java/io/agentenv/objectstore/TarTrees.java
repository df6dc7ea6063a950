package io.agentenv.objectstore;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Sandbox state trees (checkpoints, snapshot layers) as single objects, packed and unpacked by GNU tar.
 *
 * <p>Such trees hold what {@link DirectoryArchives} refuses on purpose: a sandbox's disk image (a sparse file many
 * times larger than its data, which must stay sparse), overlay whiteouts (character devices 0/0) and the
 * {@code trusted.overlay.*} attributes of captured upper dirs, owned by the sandboxes' mapped ids. GNU tar keeps all
 * of them ({@code --sparse}, {@code --xattrs --xattrs-include=*}, {@code --numeric-owner}). Its output streams into
 * the store and, on the way, into a file in the spool directory, which a store that reads its content twice (the S3
 * store hashes, then uploads) reads the second time: tar does not pack the same bytes twice (a sparse member's name
 * carries its pid). The spool directory is the caller's (a node's data directory), not the tree's parent: a tree may
 * live where this process should not write large files (a host's template cache).
 *
 * <p>{@link #get} streams the object into tar, unpacking into a fresh directory beside the target, and renames that
 * into place only once the store has checked every byte against the size and SHA-256 recorded at put; damaged bytes
 * leave nothing behind. tar never writes outside that directory: it refuses {@code ..} names and absolute names, and
 * creates a link that points outside only after every file is written, so no file is written through one. Run as root
 * (owners, devices and {@code trusted.*} attributes need it).
 */
public final class TarTrees {

    private static final long TAR_TIMEOUT_SECONDS = 600;
    private static final int MAX_ERROR_CHARS = 2000;

    private final ObjectStore store;
    private final Path spoolDir;

    /**
     * Trees in {@code store}; what a put packs is kept in {@code spoolDir} (created when missing) while it is stored.
     */
    public TarTrees(ObjectStore store, Path spoolDir) {
        this.store = requireNonNull(store, "store");
        this.spoolDir = requireNonNull(spoolDir, "spoolDir").toAbsolutePath();
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
        List<String> pack = List.of(
                "--create",
                "--file=-",
                "--directory=" + dir.toAbsolutePath(),
                "--format=posix",
                "--sparse",
                "--xattrs",
                "--xattrs-include=*",
                "--numeric-owner",
                "--sort=name",
                "--pax-option=delete=atime,delete=ctime",
                ".");
        // tar names a sparse member after its own pid, so a second run packs other bytes: the first pass keeps what
        // it packed in the spool, and a store that reads its content again (the S3 store, past one part) reads that
        Path spool;
        try {
            spool = Files.createDirectories(spoolDir).resolve(".pack-" + UUID.randomUUID());
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("pack " + dir + ": spool directory " + spoolDir + ": " + e, e);
        }
        AtomicBoolean packed = new AtomicBoolean();
        try {
            return store.put(key, out -> {
                if (packed.get()) {
                    Files.copy(spool, out);
                    return;
                }
                try (Tar tar = Tar.start(pack, ProcessBuilder.Redirect.PIPE, ProcessBuilder.Redirect.PIPE);
                        InputStream archive = tar.process.getInputStream();
                        OutputStream copy = Files.newOutputStream(spool, StandardOpenOption.CREATE_NEW)) {
                    byte[] buffer = new byte[1 << 16];
                    for (int n; (n = archive.read(buffer)) > 0; ) {
                        out.write(buffer, 0, n);
                        copy.write(buffer, 0, n);
                    }
                    tar.finish();
                }
                packed.set(true);
            });
        } finally {
            Transfers.deleteQuietly(spool);
        }
    }

    /**
     * Unpacks the object {@code key} as {@code target}, which must not exist; its parent is created when missing.
     *
     * @return the object's size and SHA-256
     * @throws ObjectStoreException.NotFound if there is no such object
     * @throws ObjectStoreException.Corrupt if its bytes are not the ones put (nothing is left behind)
     * @throws ObjectStoreException.Failed if {@code target} exists or tar fails (nothing is left behind)
     */
    public ObjectInfo get(ObjectKey key, Path target) throws ObjectStoreException {
        requireNonNull(key, "key");
        Path absolute = target.toAbsolutePath();
        if (Files.exists(absolute, LinkOption.NOFOLLOW_LINKS)) {
            throw new ObjectStoreException.Failed("unpack " + key + ": " + absolute + " exists");
        }
        Path fresh = null;
        try {
            Path parent = Files.createDirectories(absolute.getParent());
            fresh = Files.createDirectory(parent.resolve(".unpack-" + UUID.randomUUID()));
            List<String> unpack = List.of(
                    "--extract",
                    "--file=-",
                    "--directory=" + fresh,
                    "--xattrs",
                    "--xattrs-include=*",
                    "--numeric-owner",
                    "--same-permissions",
                    "--same-owner");
            ObjectInfo info = store.read(key, (in, recorded) -> {
                try (Tar tar = Tar.start(unpack, ProcessBuilder.Redirect.PIPE, ProcessBuilder.Redirect.DISCARD)) {
                    try (OutputStream archive = tar.process.getOutputStream()) {
                        in.transferTo(archive);
                    }
                    tar.finish();
                }
                return recorded;
            });
            Files.move(fresh, absolute, StandardCopyOption.ATOMIC_MOVE); // only once every byte was checked
            fresh = null;
            return info;
        } catch (FileAlreadyExistsException e) {
            throw new ObjectStoreException.Failed("unpack " + key + ": " + absolute + " appeared meanwhile", e);
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("unpack " + key + " into " + absolute + ": " + e, e);
        } finally {
            if (fresh != null) {
                deleteTreeQuietly(fresh);
            }
        }
    }

    /** One run of tar, its standard error collected aside; closing it before {@link #finish} kills it. */
    private static final class Tar implements AutoCloseable {
        final Process process;
        private final Thread errorReader;
        private volatile String errors = "";
        private boolean finished;

        private Tar(Process process) {
            this.process = process;
            this.errorReader = Thread.ofVirtual().start(() -> {
                try (InputStream stderr = process.getErrorStream()) {
                    errors = new String(stderr.readNBytes(MAX_ERROR_CHARS), StandardCharsets.UTF_8);
                    stderr.transferTo(OutputStream.nullOutputStream());
                } catch (IOException e) {
                    // the process ended; its exit status tells
                }
            });
        }

        static Tar start(List<String> arguments, ProcessBuilder.Redirect in, ProcessBuilder.Redirect out)
                throws IOException {
            List<String> command = new ArrayList<>();
            command.add("tar");
            command.addAll(arguments);
            return new Tar(new ProcessBuilder(command)
                    .redirectInput(in)
                    .redirectOutput(out)
                    .redirectError(ProcessBuilder.Redirect.PIPE)
                    .start());
        }

        /** Waits for tar and fails unless it exited with 0. */
        void finish() throws IOException {
            finished = true;
            try {
                if (!process.waitFor(TAR_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                    throw new IOException("tar did not finish within " + TAR_TIMEOUT_SECONDS + " s");
                }
                errorReader.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while tar ran");
            } finally {
                process.destroyForcibly();
            }
            if (process.exitValue() != 0) {
                throw new IOException("tar exited with " + process.exitValue() + ": " + errors.strip());
            }
        }

        /** Kills tar unless it finished: the transfer failed, and its own error is the one to report. */
        @Override
        public void close() {
            if (!finished) {
                process.destroyForcibly();
                try {
                    process.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
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
