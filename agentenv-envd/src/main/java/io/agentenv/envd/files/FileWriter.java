package io.agentenv.envd.files;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.filesystem.FsError;
import io.agentenv.envd.filesystem.FsException;
import io.agentenv.envd.filesystem.LocalFilesystem;
import io.agentenv.envd.filesystem.Metadata;
import io.agentenv.envd.filesystem.Ownership;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/**
 * Writes one uploaded file as E2B's envd does: missing parents are created for the user, the file is created or
 * truncated (following a symlink at the path), given to the user, filled, and its metadata replaced.
 */
final class FileWriter implements AutoCloseable {
    private final Path path;
    private final Map<String, String> metadata;
    private final FileChannel channel;

    private FileWriter(Path path, Map<String, String> metadata, FileChannel channel) {
        this.path = path;
        this.metadata = metadata;
        this.channel = channel;
    }

    static FileWriter open(LocalFilesystem filesystem, Path path, Ownership owner, Map<String, String> metadata) {
        requireNonNull(path, "path is null");
        Path parent = path.getParent();
        if (parent == null) {
            throw new FsException(FsError.INVALID_ARGUMENT, "path is a directory: '" + path + "'");
        }
        filesystem.ensureDirectories(parent, owner);
        if (Files.isDirectory(path)) {
            throw new FsException(FsError.INVALID_ARGUMENT, "path is a directory: '" + path + "'");
        }
        FileChannel channel;
        try {
            channel = FileChannel.open(
                    path, StandardOpenOption.WRITE, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            throw FsException.of(e, "error opening file", path);
        }
        try {
            Files.setAttribute(path, "unix:uid", owner.uid());
            Files.setAttribute(path, "unix:gid", owner.gid());
        } catch (IOException e) {
            closeQuietly(channel);
            throw FsException.of(e, "error changing file ownership of", path);
        }
        return new FileWriter(path, Map.copyOf(metadata), channel);
    }

    Path path() {
        return path;
    }

    void write(ByteBuffer data) {
        try {
            while (data.hasRemaining()) {
                channel.write(data);
            }
        } catch (IOException e) {
            throw FsException.of(e, "error writing file", path);
        }
    }

    /** Closes the file and stores its metadata; the upload of this file is then complete. */
    WrittenFile finish() {
        try {
            channel.close();
        } catch (IOException e) {
            throw FsException.of(e, "error writing file", path);
        }
        Metadata.replace(path, metadata);
        return new WrittenFile(path, metadata);
    }

    /** Abandons the file (already written bytes stay, as with E2B's envd). */
    @Override
    public void close() {
        closeQuietly(channel);
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // nothing more to do for an abandoned upload
        }
    }
}
