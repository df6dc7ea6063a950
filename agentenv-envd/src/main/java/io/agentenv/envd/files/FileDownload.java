package io.agentenv.envd.files;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.filesystem.FsError;
import io.agentenv.envd.filesystem.FsException;
import io.agentenv.envd.http.EnvdRequest;
import io.agentenv.envd.http.EnvdResponse;
import io.agentenv.envd.http.HttpEndpoint;
import io.agentenv.envd.http.HttpException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.eclipse.jetty.http.ByteRange;
import org.eclipse.jetty.http.MimeTypes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /files?path=...}: the raw bytes of a regular file, gzip-encoded when the client accepts it, with
 * {@code Range} (single range) and {@code If-Modified-Since} served on the identity coding like Go's
 * {@code http.ServeContent}.
 */
final class FileDownload implements HttpEndpoint {
    private static final Logger log = LoggerFactory.getLogger(FileDownload.class);
    private static final int BUFFER = 64 * 1024;

    private final FilesGate gate;

    FileDownload(FilesGate gate) {
        this.gate = requireNonNull(gate, "gate is null");
    }

    @Override
    public void handle(EnvdRequest request, EnvdResponse response) throws IOException {
        FilesGate.Admitted admitted = gate.admit(request, UrlSignature.Operation.READ);
        Path path = gate.resolve(admitted.path().orElse(""), admitted.user());
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(path, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            throw FilesGate.toHttp(FilesGate.noSuchFile(path));
        } catch (IOException e) {
            throw FilesGate.toHttp(FsException.of(e, "error checking if path exists", path));
        }
        if (attributes.isDirectory()) {
            throw HttpException.badRequest("path '" + path + "' is a directory");
        }
        if (!attributes.isRegularFile()) {
            throw HttpException.badRequest("path '" + path + "' is not a regular file");
        }
        ContentCoding coding = ContentCoding.negotiate(request.header("Accept-Encoding"))
                .orElseThrow(() -> new HttpException(406, "no acceptable encoding found, supported: [gzip]"));
        List<String> ranges = request.headers("Range");
        boolean rangeOrConditional = !ranges.isEmpty()
                || request.hasHeader("If-Modified-Since")
                || request.hasHeader("If-None-Match")
                || request.hasHeader("If-Range");
        if (rangeOrConditional) {
            coding = ContentCoding.IDENTITY; // Accept-Encoding is advisory; ranges address the identity bytes
        }
        String contentType = MimeTypes.DEFAULTS.getMimeByExtension(
                path.getFileName() == null ? "" : path.getFileName().toString());
        response.header("Vary", "Accept-Encoding");
        response.header("Content-Type", contentType == null ? "application/octet-stream" : contentType);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            if (coding == ContentCoding.GZIP) {
                sendGzip(channel, response);
            } else {
                sendIdentity(channel, attributes, ranges, request, response);
            }
        } catch (NoSuchFileException e) {
            throw FilesGate.toHttp(FilesGate.noSuchFile(path));
        }
        log.atDebug()
                .addKeyValue("path", path)
                .addKeyValue("user", admitted.user().name())
                .addKeyValue("coding", coding)
                .log("file read");
    }

    private static void sendGzip(FileChannel channel, EnvdResponse response) throws IOException {
        response.header("Content-Encoding", "gzip");
        try (OutputStream out = new GZIPOutputStream(response.stream(200), BUFFER)) {
            Channels.newInputStream(channel).transferTo(out);
        }
    }

    private static void sendIdentity(
            FileChannel channel,
            BasicFileAttributes attributes,
            List<String> ranges,
            EnvdRequest request,
            EnvdResponse response)
            throws IOException {
        long size = channel.size();
        Instant modified = attributes.lastModifiedTime().toInstant().truncatedTo(ChronoUnit.SECONDS);
        response.header(
                "Last-Modified", DateTimeFormatter.RFC_1123_DATE_TIME.format(modified.atOffset(ZoneOffset.UTC)));
        response.header("Accept-Ranges", "bytes");
        if (notModifiedSince(request.header("If-Modified-Since"), modified)) {
            response.removeHeader("Content-Type");
            response.sendEmpty(304);
            return;
        }
        long start = 0;
        long length = size;
        String ifRange = request.header("If-Range");
        boolean rangeApplies =
                !ranges.isEmpty() && (ifRange == null || ifRange.equals(response.header("Last-Modified")));
        int status = 200;
        if (rangeApplies) {
            List<ByteRange> parsed = ByteRange.parse(ranges, size);
            if (parsed.isEmpty()) {
                response.header("Content-Range", ByteRange.toNonSatisfiableHeaderValue(size));
                response.sendEmpty(416);
                return;
            }
            if (parsed.size() == 1) { // several ranges: answered with the whole file, as RFC 9110 allows
                ByteRange range = parsed.getFirst();
                start = range.first();
                length = range.getLength();
                status = 206;
                response.header("Content-Range", range.toHeaderValue(size));
            }
        }
        try (OutputStream out = response.fixedLength(status, length)) {
            copy(Channels.newInputStream(channel.position(start)), out, length);
        }
    }

    private static void copy(InputStream in, OutputStream out, long length) throws IOException {
        byte[] buffer = new byte[(int) Math.min(BUFFER, Math.max(length, 1))];
        long left = length;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) {
                throw new FsException(FsError.INTERNAL, "file shrank while it was being sent");
            }
            out.write(buffer, 0, n);
            left -= n;
        }
    }

    private static boolean notModifiedSince(String header, Instant modified) {
        if (header == null) {
            return false;
        }
        try {
            Instant since = DateTimeFormatter.RFC_1123_DATE_TIME.parse(header.trim(), Instant::from);
            return !modified.isAfter(since);
        } catch (DateTimeParseException e) {
            return false;
        }
    }
}
