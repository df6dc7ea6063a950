package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.VolumeEntryStat;
import io.agentenv.api.model.VolumeMetadataUpdate;
import io.agentenv.volumes.VolumeException;
import io.agentenv.volumes.Volumes;
import io.agentenv.volumes.content.EntryStat;
import io.agentenv.volumes.content.VolumeFiles;
import io.agentenv.volumes.content.VolumePath;
import io.agentenv.volumes.storage.VolumeStorage;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The volume content routes, as the SDK's {@code Volume} instance methods send them, authenticated by the volume's
 * token ({@code Authorization: Bearer <token>}, not the API key; 401 when missing or wrong). Every route takes the path
 * inside the volume as the {@code path} query parameter:
 *
 * <ul>
 *   <li>{@code GET /volumecontent/{volumeID}/dir?path&depth}: the entries below a directory
 *   <li>{@code POST /volumecontent/{volumeID}/dir?path&uid&gid&mode&force}: makes a directory ({@code force}: with its
 *       parents, and an existing one is fine)
 *   <li>{@code GET /volumecontent/{volumeID}/path?path}: one entry's stat
 *   <li>{@code PATCH /volumecontent/{volumeID}/path?path} with {@code {uid,gid,mode}}: changes owner and mode
 *   <li>{@code DELETE /volumecontent/{volumeID}/path?path}: removes a file, link or directory tree
 *   <li>{@code POST /volumecontent/{volumeID}/move?path&to&force}: renames within the volume ({@code force} replaces
 *       an existing file or empty directory)
 *   <li>{@code GET /volumecontent/{volumeID}/file?path}: a file's bytes; one {@code Range: bytes=...} is honoured (206)
 *   <li>{@code PUT /volumecontent/{volumeID}/file?path&uid&gid&mode} with the bytes: writes the file atomically
 * </ul>
 *
 * Paths never leave the volume: {@code ..} and symlinks on the way are refused (400). A full volume is 507.
 */
final class VolumeContentEndpoints {
    /** How much of a refused upload is read before answering, so that the client reads the answer (not a reset). */
    static final long DRAIN_LIMIT = 64L << 20;

    private static final String PREFIX = "/volumecontent/{volumeID}/";
    private static final String OCTETS = "application/octet-stream";
    private static final Logger log = LoggerFactory.getLogger(VolumeContentEndpoints.class);

    private final Volumes volumes;
    private final Json json;

    VolumeContentEndpoints(Volumes volumes, Json json) {
        this.volumes = requireNonNull(volumes, "volumes is null");
        this.json = requireNonNull(json, "json is null");
    }

    void register(Router router) {
        router.addPublic("GET", PREFIX + "dir", this::list)
                .addPublic("POST", PREFIX + "dir", this::makeDir)
                .addPublic("GET", PREFIX + "path", this::stat)
                .addPublic("PATCH", PREFIX + "path", this::update)
                .addPublic("DELETE", PREFIX + "path", this::remove)
                .addPublic("POST", PREFIX + "move", this::move)
                .addPublic("GET", PREFIX + "file", this::read)
                .addPublicStream("PUT", PREFIX + "file", this::write);
    }

    private VolumeFiles files(Exchange ex) {
        Optional<String> token = ex.header("authorization").flatMap(VolumeContentEndpoints::bearer);
        return volumes.files(ex.param("volumeID"), token);
    }

    private static Optional<String> bearer(String authorization) {
        String value = authorization.strip();
        if (value.length() > 7 && value.substring(0, 7).equalsIgnoreCase("bearer ")) {
            return Optional.of(value.substring(7).strip());
        }
        return Optional.empty();
    }

    private Reply list(Exchange ex) {
        VolumeFiles files = files(ex);
        int depth = intQuery(ex, "depth").orElse(1);
        List<VolumeEntryStat> entries = files.list(path(ex, "path"), depth).stream()
                .map(VolumeContentEndpoints::wire)
                .toList();
        return new Reply.Json(200, entries);
    }

    private Reply makeDir(Exchange ex) {
        VolumeFiles files = files(ex);
        EntryStat made = files.makeDir(path(ex, "path"), flag(ex, "force"), metadata(ex));
        return new Reply.Json(201, wire(made));
    }

    private Reply stat(Exchange ex) {
        return new Reply.Json(200, wire(files(ex).stat(path(ex, "path"))));
    }

    private Reply update(Exchange ex) {
        VolumeFiles files = files(ex);
        VolumeMetadataUpdate body = json.read(ex.body(), VolumeMetadataUpdate.class, true);
        VolumeFiles.Metadata metadata =
                new VolumeFiles.Metadata(optional(body.uid()), optional(body.gid()), optional(body.mode()));
        return new Reply.Json(200, wire(files.update(path(ex, "path"), metadata)));
    }

    private Reply remove(Exchange ex) {
        files(ex).remove(path(ex, "path"));
        return Reply.NO_CONTENT;
    }

    private Reply move(Exchange ex) {
        VolumeFiles files = files(ex);
        EntryStat moved = files.rename(path(ex, "path"), path(ex, "to"), flag(ex, "force"));
        return new Reply.Json(200, wire(moved));
    }

    private Reply read(Exchange ex) {
        VolumeFiles files = files(ex);
        VolumeFiles.OpenFile file = files.read(path(ex, "path"));
        try {
            long size = file.size();
            Optional<long[]> range = ex.header("range").flatMap(r -> ByteRange.parse(r, size));
            long start = range.map(r -> r[0]).orElse(0L);
            long length = range.map(r -> r[1] - r[0] + 1).orElse(size);
            Map<String, String> headers = range.isPresent()
                    ? Map.of(
                            "Accept-Ranges",
                            "bytes",
                            "Content-Range",
                            "bytes " + start + "-" + (start + length - 1) + "/" + size)
                    : Map.of("Accept-Ranges", "bytes");
            FileChannel channel = file.channel();
            return new Reply.Stream(
                    range.isPresent() ? 206 : 200, OCTETS, length, headers, out -> send(channel, start, length, out));
        } catch (RuntimeException e) {
            closeQuietly(file.channel(), e);
            throw e;
        }
    }

    private static void send(FileChannel channel, long start, long length, OutputStream out) throws IOException {
        try (channel) {
            ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
            long position = start;
            long left = length;
            while (left > 0) {
                buffer.clear().limit((int) Math.min(buffer.capacity(), left));
                int n = channel.read(buffer, position);
                if (n < 0) {
                    throw new IOException("file shrank while it was read");
                }
                out.write(buffer.array(), 0, n);
                position += n;
                left -= n;
            }
        }
    }

    private Reply write(Exchange ex) throws IOException {
        VolumeFiles files;
        VolumePath path;
        VolumeFiles.Metadata metadata;
        try {
            files = files(ex);
            path = path(ex, "path");
            metadata = metadata(ex);
            if (ex.length() > 0) {
                VolumeStorage.Usage usage = volumes.usage(ex.param("volumeID"));
                if (ex.length() > usage.totalBytes()) {
                    throw new VolumeException(
                            VolumeException.Kind.NO_SPACE,
                            "the file (" + ex.length() + " bytes) is larger than the volume (" + usage.totalBytes()
                                    + " bytes)");
                }
            }
        } catch (VolumeException | HttpProblem e) {
            drain(ex.stream());
            throw e;
        }
        try {
            return new Reply.Json(200, wire(files.write(path, ex.stream(), metadata)));
        } catch (VolumeException e) {
            drain(ex.stream());
            throw e;
        }
    }

    /** Reads what is left of a refused upload, at most {@link #DRAIN_LIMIT} bytes; how much it read. */
    private static long drain(InputStream in) {
        long total = 0;
        byte[] buffer = new byte[64 * 1024];
        try {
            int n;
            while (total < DRAIN_LIMIT && (n = in.read(buffer)) > 0) {
                total += n;
            }
        } catch (IOException e) {
            log.atDebug().setCause(e).log("the client went away while its refused upload was read");
        }
        return total;
    }

    // ---- parameters ------------------------------------------------------------------------------------------

    private static VolumePath path(Exchange ex, String name) {
        return VolumePath.parse(ex.queryValue(name)
                .orElseThrow(() -> VolumeException.invalid("query parameter '" + name + "' is required")));
    }

    private static VolumeFiles.Metadata metadata(Exchange ex) {
        return new VolumeFiles.Metadata(intQuery(ex, "uid"), intQuery(ex, "gid"), intQuery(ex, "mode"));
    }

    private static OptionalInt intQuery(Exchange ex, String name) {
        Optional<String> value = ex.queryValue(name);
        if (value.isEmpty() || value.get().isEmpty()) {
            return OptionalInt.empty();
        }
        try {
            return OptionalInt.of(Integer.parseInt(value.get()));
        } catch (NumberFormatException e) {
            throw VolumeException.invalid("query parameter '" + name + "' must be an integer");
        }
    }

    private static boolean flag(Exchange ex, String name) {
        Optional<String> value = ex.queryValue(name);
        if (value.isEmpty()) {
            return false;
        }
        return switch (value.get().toLowerCase(Locale.ROOT)) {
            case "true", "1" -> true;
            case "false", "0", "" -> false;
            default -> throw VolumeException.invalid("query parameter '" + name + "' must be true or false");
        };
    }

    private static OptionalInt optional(Integer value) {
        return value == null ? OptionalInt.empty() : OptionalInt.of(value);
    }

    private static VolumeEntryStat wire(EntryStat stat) {
        return new VolumeEntryStat(
                stat.name(),
                stat.path(),
                stat.type().wire(),
                stat.size(),
                stat.mode(),
                stat.uid(),
                stat.gid(),
                stat.atime(),
                stat.mtime(),
                stat.ctime(),
                stat.target().orElse(null));
    }

    private static void closeQuietly(FileChannel channel, Exception failure) {
        try {
            channel.close();
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }
}
