package io.agentenv.envd.files;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.filesystem.FsException;
import io.agentenv.envd.filesystem.LocalFilesystem;
import io.agentenv.envd.filesystem.Metadata;
import io.agentenv.envd.filesystem.Ownership;
import io.agentenv.envd.http.EnvdRequest;
import io.agentenv.envd.http.EnvdResponse;
import io.agentenv.envd.http.HttpEndpoint;
import io.agentenv.envd.http.HttpException;
import io.agentenv.envd.http.Responses;
import io.agentenv.envd.http.RestJson;
import io.agentenv.envd.users.UserAccount;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.MultiPart;
import org.eclipse.jetty.io.Content;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /files}: multipart/form-data (parts named {@code file}; each part's file name is its full path unless
 * the {@code path} query names one target) or application/octet-stream to {@code path}; either may be gzip-encoded
 * ({@code Content-Encoding: gzip}). {@code X-Metadata-<key>} headers become the files' metadata. Streams to disk: no
 * part is held in memory. Answers 200 with the JSON array of written files.
 */
final class FileUpload implements HttpEndpoint {
    private static final Logger log = LoggerFactory.getLogger(FileUpload.class);
    private static final String METADATA_HEADER_PREFIX = "x-metadata-";
    private static final int BUFFER = 64 * 1024;

    private final FilesGate gate;
    private final LocalFilesystem filesystem;

    FileUpload(FilesGate gate, LocalFilesystem filesystem) {
        this.gate = requireNonNull(gate, "gate is null");
        this.filesystem = requireNonNull(filesystem, "filesystem is null");
    }

    @Override
    public void handle(EnvdRequest request, EnvdResponse response) throws IOException {
        FilesGate.Admitted admitted = gate.admit(request, UrlSignature.Operation.WRITE);
        request.admitBody();
        Map<String, String> metadata = metadataHeaders(request);
        try {
            Metadata.validate(metadata);
        } catch (FsException e) {
            throw HttpException.badRequest(e.getMessage());
        }
        String encoding = request.header("Content-Encoding");
        ContentCoding coding = ContentCoding.ofRequest(encoding)
                .orElseThrow(() ->
                        HttpException.badRequest("unsupported Content-Encoding: " + encoding + ", supported: [gzip]"));
        String contentType = Optional.ofNullable(request.header("Content-Type")).orElse("");
        String mediaType = contentType.split(";")[0].trim().toLowerCase(Locale.ROOT);
        List<WrittenFile> written;
        try (InputStream body = body(request, coding)) {
            written = switch (mediaType) {
                case "multipart/form-data" -> multipart(body, contentType, admitted, metadata);
                case "application/octet-stream", "" -> octetStream(body, admitted, metadata);
                default ->
                    throw HttpException.badRequest("unsupported Content-Type '" + mediaType
                            + "': use multipart/form-data or application/octet-stream");
            };
        } catch (FsException e) {
            throw FilesGate.toHttp(e);
        } catch (ZipException e) {
            throw HttpException.badRequest("error decompressing request body: " + e.getMessage());
        }
        log.atInfo()
                .addKeyValue("files", written.size())
                .addKeyValue("user", admitted.user().name())
                .addKeyValue("coding", coding)
                .log("files written");
        Responses.json(response, 200, RestJson.entries(WrittenFile.toWire(written)));
    }

    private List<WrittenFile> octetStream(InputStream body, FilesGate.Admitted admitted, Map<String, String> metadata)
            throws IOException {
        String raw = admitted.path()
                .filter(p -> !p.isEmpty())
                .orElseThrow(() -> HttpException.badRequest(
                        "the path query parameter is required for application/octet-stream uploads"));
        Path path = gate.resolve(raw, admitted.user());
        try (FileWriter writer = FileWriter.open(filesystem, path, ownership(admitted.user()), metadata)) {
            byte[] buffer = new byte[BUFFER];
            for (int n = body.read(buffer); n >= 0; n = body.read(buffer)) {
                writer.write(ByteBuffer.wrap(buffer, 0, n));
            }
            return List.of(writer.finish());
        }
    }

    private List<WrittenFile> multipart(
            InputStream body, String contentType, FilesGate.Admitted admitted, Map<String, String> metadata)
            throws IOException {
        String boundary = MultiPart.extractBoundary(contentType);
        if (boundary == null || boundary.isEmpty()) {
            throw HttpException.badRequest("multipart/form-data without a boundary");
        }
        return new PartWriter(admitted, metadata).run(body, boundary);
    }

    /** Receives the parser's callbacks and writes each {@code file} part straight to its target. */
    private final class PartWriter extends MultiPart.AbstractPartsListener {
        private final FilesGate.Admitted admitted;
        private final Map<String, String> metadata;
        private final List<WrittenFile> written = new ArrayList<>();
        private final Set<Path> targets = new HashSet<>();
        private FileWriter current;
        private RuntimeException failure;
        private boolean complete;

        PartWriter(FilesGate.Admitted admitted, Map<String, String> metadata) {
            this.admitted = admitted;
            this.metadata = metadata;
        }

        List<WrittenFile> run(InputStream body, String boundary) throws IOException {
            MultiPart.Parser parser = new MultiPart.Parser(boundary, this);
            ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
            try {
                while (failure == null && !complete) {
                    int n = body.read(buffer.array(), 0, buffer.capacity());
                    buffer.clear();
                    if (n < 0) {
                        parser.parse(Content.Chunk.from(ByteBuffer.allocate(0), true));
                        break;
                    }
                    buffer.limit(n);
                    parser.parse(Content.Chunk.from(buffer, false));
                }
            } finally {
                if (current != null) {
                    current.close();
                }
            }
            if (failure != null) {
                throw failure;
            }
            if (!complete) {
                throw HttpException.badRequest("incomplete multipart body");
            }
            return written;
        }

        @Override
        public void onPartHeaders() {
            if (failure != null || !"file".equals(getName())) {
                return;
            }
            try {
                String raw = admitted.path().filter(p -> !p.isEmpty()).orElse(getFileName());
                if (raw == null || raw.isEmpty()) {
                    throw HttpException.badRequest(
                            "a file part has no file name and the path query parameter is missing");
                }
                Path path = gate.resolve(raw, admitted.user());
                if (!targets.add(path)) {
                    throw HttpException.badRequest("you cannot upload multiple files to the same path '" + path
                            + "' in one upload request, only the first specified file was uploaded");
                }
                current = FileWriter.open(filesystem, path, ownership(admitted.user()), metadata);
            } catch (RuntimeException e) {
                failure = e;
            }
        }

        @Override
        public void onPartContent(Content.Chunk chunk) {
            if (failure != null || current == null) {
                return;
            }
            try {
                current.write(chunk.getByteBuffer().slice());
            } catch (RuntimeException e) {
                failure = e;
            }
        }

        @Override
        public void onPartEnd() {
            super.onPartEnd();
            if (failure != null || current == null) {
                return;
            }
            try {
                written.add(current.finish());
            } catch (RuntimeException e) {
                failure = e;
            } finally {
                current = null;
            }
        }

        @Override
        public void onPart(String name, String fileName, HttpFields headers) {
            // parts are written as they stream in (onPartHeaders/onPartContent/onPartEnd)
        }

        @Override
        public void onComplete() {
            complete = true;
        }

        @Override
        public void onFailure(Throwable cause) {
            if (failure == null) {
                failure = HttpException.badRequest("error reading multipart body: " + cause.getMessage());
            }
        }
    }

    private static InputStream body(EnvdRequest request, ContentCoding coding) throws IOException {
        InputStream raw = request.body();
        return coding == ContentCoding.GZIP ? new GZIPInputStream(raw, BUFFER) : raw;
    }

    /** {@code X-Metadata-<Key>: value} headers as {@code key -> value} (key lowercased; the first value wins). */
    static Map<String, String> metadataHeaders(EnvdRequest request) {
        Map<String, String> out = new HashMap<>();
        request.forEachHeader((field, value) -> {
            String name = field.toLowerCase(Locale.ROOT);
            if (name.startsWith(METADATA_HEADER_PREFIX) && name.length() > METADATA_HEADER_PREFIX.length()) {
                out.putIfAbsent(name.substring(METADATA_HEADER_PREFIX.length()), value);
            }
        });
        return out;
    }

    private static Ownership ownership(UserAccount user) {
        return new Ownership(user.uid(), user.gid());
    }
}
