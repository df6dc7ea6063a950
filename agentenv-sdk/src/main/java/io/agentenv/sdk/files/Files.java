package io.agentenv.sdk.files;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Timestamp;
import io.agentenv.envd.protocol.filesystem.ListDirRequest;
import io.agentenv.envd.protocol.filesystem.ListDirResponse;
import io.agentenv.envd.protocol.filesystem.MakeDirRequest;
import io.agentenv.envd.protocol.filesystem.MakeDirResponse;
import io.agentenv.envd.protocol.filesystem.MoveRequest;
import io.agentenv.envd.protocol.filesystem.MoveResponse;
import io.agentenv.envd.protocol.filesystem.RemoveRequest;
import io.agentenv.envd.protocol.filesystem.RemoveResponse;
import io.agentenv.envd.protocol.filesystem.StatRequest;
import io.agentenv.envd.protocol.filesystem.StatResponse;
import io.agentenv.envd.protocol.filesystem.WatchDirRequest;
import io.agentenv.envd.protocol.filesystem.WatchDirResponse;
import io.agentenv.sdk.FileNotFoundException;
import io.agentenv.sdk.InvalidArgumentException;
import io.agentenv.sdk.SandboxException;
import io.agentenv.sdk.internal.EnvdClient;
import io.agentenv.sdk.internal.Json;
import io.agentenv.sdk.internal.ServerStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The sandbox's filesystem: contents through envd's {@code /files} route, everything else through its filesystem
 * service. Relative paths resolve in the user's home. Calls act as the sandbox's default user unless this view was
 * made with {@link #withUser(String)}. Obtain it from {@code sandbox.files()}.
 */
public final class Files {
    private static final String SERVICE = "filesystem.Filesystem/";
    private final EnvdClient envd;
    private final Optional<String> user;

    /** For a sandbox's envd (internal: use {@code sandbox.files()}). */
    public Files(EnvdClient envd, Optional<String> user) {
        this.envd = Objects.requireNonNull(envd, "envd");
        this.user = Objects.requireNonNull(user, "user");
    }

    /** The same filesystem, acting as {@code user} (e.g. {@code root}). */
    public Files withUser(String user) {
        return new Files(envd, Optional.of(Objects.requireNonNull(user, "user")));
    }

    /** A file's contents as text (UTF-8). */
    public String read(String path) {
        return new String(readBytes(path), StandardCharsets.UTF_8);
    }

    /** A file's contents. */
    public byte[] readBytes(String path) {
        try (InputStream in = readStream(path)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new SandboxException("reading " + path + " failed: " + e.getMessage(), e);
        }
    }

    /** A file's contents as a stream, read as it arrives; the caller closes it. */
    public InputStream readStream(String path) {
        return envd.download(requirePath(path), user);
    }

    /** {@link #read(String)} on the sandbox's stream executor. */
    public CompletableFuture<String> readAsync(String path) {
        return CompletableFuture.supplyAsync(() -> read(path), envd.config().streamExecutor());
    }

    /** Writes text (UTF-8), creating parent directories and replacing an existing file. */
    public WriteInfo write(String path, String text) {
        return write(path, text.getBytes(StandardCharsets.UTF_8));
    }

    /** Writes bytes, creating parent directories and replacing an existing file. */
    public WriteInfo write(String path, byte[] data) {
        return upload(path, HttpRequest.BodyPublishers.ofByteArray(data.clone()));
    }

    /** Writes what {@code data} holds (streamed, not held in memory); the caller closes the stream afterwards. */
    public WriteInfo write(String path, InputStream data) {
        Objects.requireNonNull(data, "data");
        return upload(path, HttpRequest.BodyPublishers.ofInputStream(() -> data));
    }

    /** {@link #write(String, byte[])} on the sandbox's stream executor. */
    public CompletableFuture<WriteInfo> writeAsync(String path, byte[] data) {
        byte[] copy = data.clone();
        return CompletableFuture.supplyAsync(
                () -> write(path, copy), envd.config().streamExecutor());
    }

    private WriteInfo upload(String path, HttpRequest.BodyPublisher body) {
        JsonNode written = envd.upload(Optional.of(requirePath(path)), user, "application/octet-stream", body);
        return writeInfo(written.get(0));
    }

    /** Writes several files in one request (each named by its full path). */
    public List<WriteInfo> write(List<WriteEntry> files) {
        if (files.isEmpty()) {
            return List.of();
        }
        String boundary = "agentenv-" + UUID.randomUUID();
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (WriteEntry file : files) {
            String name = requirePath(file.path())
                    .replace("\"", "%22")
                    .replace("\r", "%0D")
                    .replace("\n", "%0A");
            body.writeBytes(("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + name
                            + "\"\r\nContent-Type: application/octet-stream\r\n\r\n")
                    .getBytes(StandardCharsets.UTF_8));
            body.writeBytes(file.data());
            body.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
        }
        body.writeBytes(("--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
        JsonNode written = envd.upload(
                Optional.empty(),
                user,
                "multipart/form-data; boundary=" + boundary,
                HttpRequest.BodyPublishers.ofByteArray(body.toByteArray()));
        List<WriteInfo> out = new ArrayList<>();
        written.forEach(w -> out.add(writeInfo(w)));
        return out;
    }

    private static WriteInfo writeInfo(JsonNode w) {
        String type = Json.text(w, "type", "file");
        return new WriteInfo(
                Json.text(w, "name", ""), "dir".equals(type) ? FileType.DIR : FileType.FILE, Json.text(w, "path", ""));
    }

    /** The entries of a directory (its direct children). */
    public List<EntryInfo> list(String path) {
        return list(path, 1);
    }

    /** The entries of a directory down to {@code depth} levels (1: its children). */
    public List<EntryInfo> list(String path, int depth) {
        if (depth < 1) {
            throw new InvalidArgumentException("depth should be at least one: " + depth);
        }
        ListDirResponse response = envd.unary(
                SERVICE + "ListDir",
                ListDirRequest.newBuilder()
                        .setPath(requirePath(path))
                        .setDepth(depth)
                        .build(),
                ListDirResponse.parser(),
                user,
                true);
        List<EntryInfo> out = new ArrayList<>();
        for (io.agentenv.envd.protocol.filesystem.EntryInfo e : response.getEntriesList()) {
            entry(e).ifPresent(out::add);
        }
        return out;
    }

    /** Whether the path exists. */
    public boolean exists(String path) {
        try {
            getInfo(path);
            return true;
        } catch (FileNotFoundException e) {
            return false;
        }
    }

    /** Details of a file, directory or link; {@link FileNotFoundException} when there is none. */
    public EntryInfo getInfo(String path) {
        StatResponse response = envd.unary(
                SERVICE + "Stat",
                StatRequest.newBuilder().setPath(requirePath(path)).build(),
                StatResponse.parser(),
                user,
                true);
        return entry(response.getEntry())
                .orElseThrow(() -> new SandboxException("envd described " + path + " without a type"));
    }

    /** Creates a directory and its parents; false when it already existed. */
    public boolean makeDir(String path) {
        try {
            envd.unary(
                    SERVICE + "MakeDir",
                    MakeDirRequest.newBuilder().setPath(requirePath(path)).build(),
                    MakeDirResponse.parser(),
                    user,
                    true);
            return true;
        } catch (SandboxException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("[already_exists]")) {
                return false;
            }
            throw e;
        }
    }

    /** Moves {@code oldPath} to {@code newPath}; returns the entry at its new place. */
    public EntryInfo rename(String oldPath, String newPath) {
        MoveResponse response = envd.unary(
                SERVICE + "Move",
                MoveRequest.newBuilder()
                        .setSource(requirePath(oldPath))
                        .setDestination(requirePath(newPath))
                        .build(),
                MoveResponse.parser(),
                user,
                true);
        return entry(response.getEntry())
                .orElseThrow(() -> new SandboxException("envd described " + newPath + " without a type"));
    }

    /** Removes a file or a directory with its contents. */
    public void remove(String path) {
        envd.unary(
                SERVICE + "Remove",
                RemoveRequest.newBuilder().setPath(requirePath(path)).build(),
                RemoveResponse.parser(),
                user,
                true);
    }

    /** {@link #watchDir(String, Consumer, WatchOptions)} with the defaults. */
    public WatchHandle watchDir(String path, Consumer<FilesystemEvent> onEvent) {
        return watchDir(path, onEvent, WatchOptions.defaults());
    }

    /**
     * Watches a directory: returns once the watch is in place (so later changes are seen); events reach
     * {@code onEvent} on a reader thread. {@link FileNotFoundException} for a missing directory,
     * {@link InvalidArgumentException} for a file.
     */
    public WatchHandle watchDir(String path, Consumer<FilesystemEvent> onEvent, WatchOptions options) {
        Objects.requireNonNull(onEvent, "onEvent");
        WatchDirRequest request = WatchDirRequest.newBuilder()
                .setPath(requirePath(path))
                .setRecursive(options.recursive())
                .setIncludeEntry(options.includeEntry())
                .build();
        ServerStream stream =
                envd.stream(SERVICE + "WatchDir", request, options.user().or(() -> user), options.timeout(), true);
        try {
            Optional<byte[]> first = stream.next();
            if (first.isEmpty()
                    || WatchDirResponse.parseFrom(first.get()).getEventCase() != WatchDirResponse.EventCase.START) {
                throw new SandboxException("Expected start event from WatchDir");
            }
        } catch (InvalidProtocolBufferException e) {
            stream.close();
            throw new SandboxException("envd sent a malformed watch event", e);
        } catch (RuntimeException e) {
            stream.close();
            throw e;
        }
        WatchHandle handle = new WatchHandle(stream, onEvent, options.onExit());
        envd.config().streamExecutor().execute(handle::pump);
        return handle;
    }

    static Optional<FilesystemEvent> event(io.agentenv.envd.protocol.filesystem.FilesystemEvent e) {
        FilesystemEventType type;
        switch (e.getType()) {
            case EVENT_TYPE_CREATE:
                type = FilesystemEventType.CREATE;
                break;
            case EVENT_TYPE_WRITE:
                type = FilesystemEventType.WRITE;
                break;
            case EVENT_TYPE_REMOVE:
                type = FilesystemEventType.REMOVE;
                break;
            case EVENT_TYPE_RENAME:
                type = FilesystemEventType.RENAME;
                break;
            case EVENT_TYPE_CHMOD:
                type = FilesystemEventType.CHMOD;
                break;
            default:
                return Optional.empty();
        }
        return Optional.of(
                new FilesystemEvent(e.getName(), type, e.hasEntry() ? entry(e.getEntry()) : Optional.empty()));
    }

    /** envd's entry as the API's; entries of an unknown type are dropped, as E2B's SDKs drop them. */
    static Optional<EntryInfo> entry(io.agentenv.envd.protocol.filesystem.EntryInfo e) {
        FileType type;
        switch (e.getType()) {
            case FILE_TYPE_FILE:
                type = FileType.FILE;
                break;
            case FILE_TYPE_DIRECTORY:
                type = FileType.DIR;
                break;
            case FILE_TYPE_SYMLINK:
                type = FileType.SYMLINK;
                break;
            default:
                return Optional.empty();
        }
        Timestamp t = e.getModifiedTime();
        Map<String, String> metadata = e.getMetadataMap();
        return Optional.of(new EntryInfo(
                e.getName(),
                type,
                e.getPath(),
                e.getSize(),
                e.getMode(),
                e.getPermissions(),
                e.getOwner(),
                e.getGroup(),
                Instant.ofEpochSecond(t.getSeconds(), t.getNanos()),
                e.hasSymlinkTarget() ? Optional.of(e.getSymlinkTarget()) : Optional.empty(),
                metadata));
    }

    private static String requirePath(String path) {
        Objects.requireNonNull(path, "path");
        if (path.isEmpty()) {
            throw new InvalidArgumentException("path must not be empty");
        }
        return path;
    }
}
