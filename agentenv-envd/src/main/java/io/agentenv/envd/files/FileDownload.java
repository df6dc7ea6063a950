package io.agentenv.envd.files;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.filesystem.FsError;
import io.agentenv.envd.filesystem.FsException;
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
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.MimeTypes;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
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
    public void handle(Request request, Response response) throws IOException {
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
        ContentCoding coding = ContentCoding.negotiate(request.getHeaders().get(HttpHeader.ACCEPT_ENCODING))
                .orElseThrow(() -> new HttpException(406, "no acceptable encoding found, supported: [gzip]"));
        List<String> ranges = request.getHeaders().getValuesList(HttpHeader.RANGE);
        boolean rangeOrConditional = !ranges.isEmpty()
                || request.getHeaders().contains(HttpHeader.IF_MODIFIED_SINCE)
                || request.getHeaders().contains(HttpHeader.IF_NONE_MATCH)
                || request.getHeaders().contains(HttpHeader.IF_RANGE);
        if (rangeOrConditional) {
            coding = ContentCoding.IDENTITY; // Accept-Encoding is advisory; ranges address the identity bytes
        }
        String contentType = MimeTypes.DEFAULTS.getMimeByExtension(path.getFileName() == null ? "" : path.getFileName().toString());
        response.getHeaders().put(HttpHeader.VARY, "Accept-Encoding");
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType == null ? "application/octet-stream" : contentType);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            if (coding == ContentCoding.GZIP) {
                sendGzip(channel, response);
            } else {
                sendIdentity(channel, attributes, ranges, request, response);
            }
        } catch (NoSuchFileException e) {
            throw FilesGate.toHttp(FilesGate.noSuchFile(path));
        }
        log.atDebug().addKeyValue("path", path).addKeyValue("user", admitted.user().name())
                .addKeyValue("coding", coding).log("file read");
    }

    private static void sendGzip(FileChannel channel, Response response) throws IOException {
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_ENCODING, "gzip");
        try (OutputStream out = new GZIPOutputStream(Content.Sink.asOutputStream(response), BUFFER)) {
            Channels.newInputStream(channel).transferTo(out);
        }
    }

    private static void sendIdentity(FileChannel channel, BasicFileAttributes attributes, List<String> ranges,
                                     Request request, Response response) throws IOException {
        long size = channel.size();
        Instant modified = attributes.lastModifiedTime().toInstant().truncatedTo(ChronoUnit.SECONDS);
        response.getHeaders().put(HttpHeader.LAST_MODIFIED, DateTimeFormatter.RFC_1123_DATE_TIME.format(modified.atOffset(ZoneOffset.UTC)));
        response.getHeaders().put(HttpHeader.ACCEPT_RANGES, "bytes");
        if (notModifiedSince(request.getHeaders().get(HttpHeader.IF_MODIFIED_SINCE), modified)) {
            response.setStatus(304);
            response.getHeaders().remove(HttpHeader.CONTENT_TYPE);
            try (OutputStream out = Content.Sink.asOutputStream(response)) {
                out.flush();
            }
            return;
        }
        long start = 0;
        long length = size;
        String ifRange = request.getHeaders().get(HttpHeader.IF_RANGE);
        boolean rangeApplies = !ranges.isEmpty() && (ifRange == null
                || ifRange.equals(response.getHeaders().get(HttpHeader.LAST_MODIFIED)));
        if (rangeApplies) {
            List<ByteRange> parsed = ByteRange.parse(ranges, size);
            if (parsed.isEmpty()) {
                response.setStatus(416);
                response.getHeaders().put(HttpHeader.CONTENT_RANGE, ByteRange.toNonSatisfiableHeaderValue(size));
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 0);
                try (OutputStream out = Content.Sink.asOutputStream(response)) {
                    out.flush();
                }
                return;
            }
            if (parsed.size() == 1) { // several ranges: answered with the whole file, as RFC 9110 allows
                ByteRange range = parsed.getFirst();
                start = range.first();
                length = range.getLength();
                response.setStatus(206);
                response.getHeaders().put(HttpHeader.CONTENT_RANGE, range.toHeaderValue(size));
            } else {
                response.setStatus(200);
            }
        } else {
            response.setStatus(200);
        }
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, length);
        try (OutputStream out = Content.Sink.asOutputStream(response)) {
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
