package io.agentenv.objectstore;

import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * Objects in a directory that every node mounts (NFS, CephFS, any POSIX file system with an atomic rename).
 *
 * <p>Layout under {@code root}: {@code objects/} holds one file per object, at the key's segments joined as a path
 * with {@value #SUFFIX} after the last one ({@code templates/base/rootfs.tar} is {@code
 * objects/templates/base/rootfs.tar@}); the suffix is no key character, so an object file never has the name of a
 * directory and {@code a/b} and {@code a/b/c} can both exist. {@code tmp/} holds puts in progress.
 *
 * <p>An object file is a {@value #HEADER_SIZE}-byte header (the magic {@code AENVOBJ1}, the content's length as a
 * big-endian long, its SHA-256) followed by the content. The digest lives in the same file as the bytes it describes
 * because that is what makes it crash-consistent with them without any ordering between two files: a put writes
 * the content to a temp file in {@code tmp/} while hashing it (one pass over the source), writes the header last,
 * fsyncs the file, renames it over the object's path (atomic within one file system, so readers see the old file or
 * the new one) and fsyncs the directory. A crash leaves at most a temp file, never a digest without its bytes or
 * bytes without their digest. (A separate metadata file would need its own rename, ordered against the data's, and
 * a content-addressed layout would need garbage collection that is safe against puts on other nodes; neither buys
 * anything here.)
 *
 * <p>The store never creates {@code root}: a mount point that is not mounted must not silently become a local
 * directory. {@code objects/} and {@code tmp/} are created by the constructor; if they disappear later (the file
 * system was unmounted) operations fail with {@link ObjectStoreException.Unavailable}. Temp files left by a crash are
 * removed by the next store opened on the root once they are older than {@code staleTempAge}.
 */
public final class FileSystemObjectStore implements ObjectStore {

    /** Appended to an object's last key segment; not a key character. */
    static final String SUFFIX = "@";
    /** The header's length: magic (8), size (8), SHA-256 (32). */
    static final int HEADER_SIZE = 48;

    private static final byte[] MAGIC = {'A', 'E', 'N', 'V', 'O', 'B', 'J', '1'};
    private static final int MOVE_ATTEMPTS = 5;

    private final Path root;
    private final Path objects;
    private final Path tmp;

    /**
     * A store on {@code root}, which must exist; temp files older than a day are removed.
     *
     * @throws ObjectStoreException.Unavailable if {@code root} is not a directory
     */
    public FileSystemObjectStore(Path root) throws ObjectStoreException {
        this(root, Duration.ofDays(1));
    }

    /**
     * A store on {@code root}, which must exist.
     *
     * @param staleTempAge temp files in {@code tmp/} older than this are removed now (puts in progress on other
     *     nodes are younger)
     * @throws ObjectStoreException.Unavailable if {@code root} is not a directory
     */
    public FileSystemObjectStore(Path root, Duration staleTempAge) throws ObjectStoreException {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(staleTempAge, "staleTempAge");
        if (!Files.isDirectory(root)) {
            throw new ObjectStoreException.Unavailable("object store root " + root + " is not a directory", null);
        }
        try {
            this.root = root.toRealPath();
            this.objects = createDirectory(this.root.resolve("objects"));
            this.tmp = createDirectory(this.root.resolve("tmp"));
            removeStaleTemps(staleTempAge);
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("opening object store " + root + ": " + e, e);
        }
    }

    /** The directory the store was opened on. */
    public Path root() {
        return root;
    }

    @Override
    public ObjectInfo put(ObjectKey key, ContentWriter content) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(content, "content");
        Path temp = tmp.resolve(UUID.randomUUID() + ".tmp");
        try {
            ObjectInfo info;
            try (FileChannel channel = FileChannel.open(temp, CREATE_NEW, WRITE)) {
                channel.position(HEADER_SIZE);
                Sha256.HashingOutputStream out = new Sha256.HashingOutputStream(
                        new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 20));
                try {
                    content.writeTo(out);
                } catch (IOException | RuntimeException e) {
                    throw new ObjectStoreException.Failed("producing the content of " + key + ": " + e, e);
                }
                out.flush();
                info = new ObjectInfo(key, out.count(), out.sha256());
                writeFully(channel, header(info), 0);
                channel.force(true);
            }
            Path file = path(key);
            moveIntoPlace(temp, file);
            return info;
        } catch (IOException e) {
            throw failure("put " + key, e);
        } finally {
            Transfers.deleteQuietly(temp);
        }
    }

    @Override
    public <T> T read(ObjectKey key, ContentReader<T> reader) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(reader, "reader");
        try (FileChannel channel = open(key)) {
            ObjectInfo info = readHeader(key, channel);
            InputStream source = Channels.newInputStream(channel);
            return Transfers.readVerified(info, source, reader, e -> failure("read " + key, e));
        } catch (NoSuchFileException e) {
            throw notFoundOrUnavailable(key, e);
        } catch (IOException e) {
            throw failure("read " + key, e);
        }
    }

    @Override
    public Optional<ObjectInfo> stat(ObjectKey key) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        try (FileChannel channel = open(key)) {
            return Optional.of(readHeader(key, channel));
        } catch (NoSuchFileException e) {
            requireMounted(e);
            return Optional.empty();
        } catch (IOException e) {
            throw failure("stat " + key, e);
        }
    }

    @Override
    public boolean delete(ObjectKey key) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        Path file = path(key);
        try {
            requireMounted(null);
            boolean existed = Files.deleteIfExists(file);
            if (existed) {
                Transfers.fsyncDirectory(file.getParent());
                pruneEmptyParents(file.getParent());
            }
            return existed;
        } catch (IOException e) {
            throw failure("delete " + key, e);
        }
    }

    @Override
    public List<ObjectEntry> list(String prefix) throws ObjectStoreException {
        ObjectKey.checkPrefix(prefix);
        String dirPart = prefix.contains("/") ? prefix.substring(0, prefix.lastIndexOf('/')) : "";
        Path start = dirPart.isEmpty() ? objects : objects.resolve(dirPart);
        List<ObjectEntry> entries = new ArrayList<>();
        try {
            requireMounted(null);
            if (!Files.isDirectory(start, LinkOption.NOFOLLOW_LINKS)) {
                return List.of();
            }
            Files.walkFileTree(
                    start,
                    new SimpleFileVisitor<>() { // links are not followed
                        @Override
                        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                            String name = file.getFileName().toString();
                            if (attrs.isRegularFile() && name.endsWith(SUFFIX) && attrs.size() >= HEADER_SIZE) {
                                String relative = objects.relativize(file).toString();
                                String value = relative.substring(0, relative.length() - SUFFIX.length());
                                if (ObjectKey.isValid(value) && value.startsWith(prefix)) {
                                    entries.add(new ObjectEntry(new ObjectKey(value), attrs.size() - HEADER_SIZE));
                                }
                            }
                            return FileVisitResult.CONTINUE;
                        }

                        @Override
                        public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                            if (e instanceof NoSuchFileException) {
                                return FileVisitResult.CONTINUE; // deleted while listed
                            }
                            throw e;
                        }

                        @Override
                        public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                            if (e != null && !(e instanceof NoSuchFileException)) {
                                throw e;
                            }
                            return FileVisitResult.CONTINUE;
                        }
                    });
        } catch (IOException e) {
            throw failure("list " + prefix, e);
        }
        entries.sort(Comparator.comparing(ObjectEntry::key));
        return entries;
    }

    @Override
    public void close() {
        // nothing held open between operations
    }

    /** Where {@code key}'s object file is; beneath {@code objects/} by construction of a valid key. */
    Path path(ObjectKey key) {
        Path file = objects.resolve(key.value() + SUFFIX).normalize();
        if (!file.startsWith(objects) || file.equals(objects)) {
            throw new IllegalStateException("key " + key + " maps outside the store");
        }
        return file;
    }

    private FileChannel open(ObjectKey key) throws IOException {
        return FileChannel.open(path(key), READ, LinkOption.NOFOLLOW_LINKS);
    }

    private static ByteBuffer header(ObjectInfo info) {
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE);
        header.put(MAGIC).putLong(info.size()).put(Sha256.bytes(info.sha256()));
        return header.flip();
    }

    /** The header of an open object file, checked against the file's length; the channel is left after it. */
    private static ObjectInfo readHeader(ObjectKey key, FileChannel channel)
            throws IOException, ObjectStoreException.Corrupt {
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE);
        while (header.hasRemaining() && channel.read(header) >= 0) {
            // fill
        }
        if (header.hasRemaining()) {
            throw new ObjectStoreException.Corrupt(key + ": object file shorter than its header");
        }
        header.flip();
        byte[] magic = new byte[MAGIC.length];
        header.get(magic);
        if (!Arrays.equals(magic, MAGIC)) {
            throw new ObjectStoreException.Corrupt(key + ": not an object file (bad magic)");
        }
        long size = header.getLong();
        byte[] digest = new byte[32];
        header.get(digest);
        if (size < 0 || channel.size() != HEADER_SIZE + size) {
            throw new ObjectStoreException.Corrupt(
                    key + ": object file holds " + (channel.size() - HEADER_SIZE) + " bytes, its header says " + size);
        }
        return new ObjectInfo(key, size, Sha256.hex(digest));
    }

    private static void writeFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            at += channel.write(buffer, at);
        }
    }

    /**
     * Renames {@code temp} over {@code file}, creating its directories (never {@code objects/} itself). A delete on
     * another thread or node may prune a directory between its creation and the rename; the rename is then tried
     * again.
     */
    private void moveIntoPlace(Path temp, Path file) throws IOException, ObjectStoreException.Unavailable {
        for (int attempt = 1; ; attempt++) {
            try {
                createParents(file.getParent());
                Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
                Transfers.fsyncDirectory(file.getParent());
                return;
            } catch (NoSuchFileException e) {
                requireMounted(e);
                if (attempt == MOVE_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    private void createParents(Path dir) throws IOException, ObjectStoreException.Unavailable {
        if (dir.equals(objects)) {
            requireMounted(null);
            return;
        }
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        createParents(dir.getParent());
        try {
            Files.createDirectory(dir);
            Transfers.fsyncDirectory(dir.getParent());
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw e;
            }
        }
    }

    /** Removes the directories a delete emptied, up to (not including) {@code objects/}. */
    private void pruneEmptyParents(Path dir) throws IOException {
        for (Path d = dir; !d.equals(objects) && d.startsWith(objects); d = d.getParent()) {
            try {
                Files.delete(d);
            } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                return;
            }
        }
    }

    private void removeStaleTemps(Duration age) throws IOException {
        Instant cutoff = Instant.now().minus(age);
        try (DirectoryStream<Path> temps = Files.newDirectoryStream(tmp)) {
            for (Path temp : temps) {
                try {
                    BasicFileAttributes attrs =
                            Files.readAttributes(temp, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                    if (attrs.isRegularFile()
                            && attrs.lastModifiedTime().toInstant().isBefore(cutoff)) {
                        Files.deleteIfExists(temp);
                    }
                } catch (NoSuchFileException raced) {
                    // another node removed it first
                }
            }
        }
    }

    private static Path createDirectory(Path dir) throws IOException {
        try {
            Files.createDirectory(dir);
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw e;
            }
        }
        return dir;
    }

    /** Throws {@link ObjectStoreException.Unavailable} if the store's directories are gone (unmounted). */
    private void requireMounted(IOException cause) throws ObjectStoreException.Unavailable {
        if (!Files.isDirectory(objects, LinkOption.NOFOLLOW_LINKS)
                || !Files.isDirectory(tmp, LinkOption.NOFOLLOW_LINKS)) {
            throw new ObjectStoreException.Unavailable(
                    "object store " + root + " is not reachable (objects/ or tmp/ missing: not mounted?)", cause);
        }
    }

    private ObjectStoreException notFoundOrUnavailable(ObjectKey key, NoSuchFileException e) {
        try {
            requireMounted(e);
            return new ObjectStoreException.NotFound(key);
        } catch (ObjectStoreException.Unavailable unavailable) {
            return unavailable;
        }
    }

    private ObjectStoreException failure(String what, Exception e) {
        if (e instanceof ObjectStoreException known) {
            return known;
        }
        try {
            requireMounted(e instanceof IOException io ? io : null);
        } catch (ObjectStoreException.Unavailable unavailable) {
            return unavailable;
        }
        return new ObjectStoreException.Failed(what + ": " + e, e);
    }
}
