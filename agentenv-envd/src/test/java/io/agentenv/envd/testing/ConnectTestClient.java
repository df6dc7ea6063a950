package io.agentenv.envd.testing;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.protobuf.Message;
import io.agentenv.envd.protocol.connect.EndStream;
import io.agentenv.envd.protocol.connect.Envelope;
import io.agentenv.envd.protocol.connect.WireFormat;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A minimal Connect client over the JDK HttpClient, for tests: unary calls and streams read envelope by envelope. */
public final class ConnectTestClient {
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final URI base;

    public ConnectTestClient(int port) {
        this.base = URI.create("http://127.0.0.1:" + port);
    }

    public URI base() {
        return base;
    }

    /** A unary reply: HTTP status, content type and body. */
    public record Reply(int status, String contentType, byte[] body) {
        public String text() {
            return new String(body, UTF_8);
        }

        public <T extends Message> T message(T prototype) {
            return WireFormat.JSON.parse(body, prototype);
        }
    }

    public Reply unary(String procedure, Message request, Map<String, String> headers) throws Exception {
        return unaryRaw(procedure, "application/json", WireFormat.JSON.serialize(request), headers);
    }

    public Reply unaryRaw(String procedure, String contentType, byte[] body, Map<String, String> headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve("/" + procedure))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Content-Type", contentType)
                .header("Connect-Protocol-Version", "1");
        headers.forEach(request::header);
        HttpResponse<byte[]> response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        return new Reply(
                response.statusCode(),
                response.headers().firstValue("content-type").orElse(""),
                response.body());
    }

    public HttpResponse<byte[]> get(String path, Map<String, String> headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path)).GET();
        headers.forEach(request::header);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    public HttpResponse<byte[]> post(String path, String body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        headers.forEach(request::header);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** Opens a server stream; read it with {@link Stream#next} and close it to disconnect. */
    public <R extends Message> Stream<R> stream(
            String procedure, Message request, R responsePrototype, WireFormat format, Map<String, String> headers)
            throws Exception {
        byte[] frame = Envelope.message(format.serialize(request)).encode();
        HttpRequest.Builder builder = HttpRequest.newBuilder(base.resolve("/" + procedure))
                .POST(HttpRequest.BodyPublishers.ofByteArray(frame))
                .header("Content-Type", format.streamContentType())
                .header("Connect-Protocol-Version", "1");
        headers.forEach(builder::header);
        HttpResponse<InputStream> response = http.send(builder.build(), HttpResponse.BodyHandlers.ofInputStream());
        return new Stream<>(response, responsePrototype, format);
    }

    /** Sends a client stream of already-encoded request messages; returns the raw response frames. */
    public List<Envelope> clientStream(String procedure, List<Message> requests) throws Exception {
        List<byte[]> frames = new ArrayList<>();
        for (Message m : requests) {
            frames.add(Envelope.message(WireFormat.JSON.serialize(m)).encode());
        }
        int size = frames.stream().mapToInt(f -> f.length).sum();
        byte[] body = new byte[size];
        int at = 0;
        for (byte[] f : frames) {
            System.arraycopy(f, 0, body, at, f.length);
            at += f.length;
        }
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/" + procedure))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Content-Type", "application/connect+json")
                .build();
        HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        List<Envelope> out = new ArrayList<>();
        try (InputStream in = response.body()) {
            for (Optional<Envelope> e = Envelope.read(in, 1 << 20); e.isPresent(); e = Envelope.read(in, 1 << 20)) {
                out.add(e.get());
            }
        }
        return out;
    }

    /** One open server stream. */
    public static final class Stream<R extends Message> implements AutoCloseable {
        private final HttpResponse<InputStream> response;
        private final R prototype;
        private final WireFormat format;
        private EndStream end;

        Stream(HttpResponse<InputStream> response, R prototype, WireFormat format) {
            this.response = response;
            this.prototype = prototype;
            this.format = format;
        }

        public int status() {
            return response.statusCode();
        }

        public String contentType() {
            return response.headers().firstValue("content-type").orElse("");
        }

        /** The next message, or empty once the end-stream frame was read (see {@link #end()}). */
        public Optional<R> next() throws IOException {
            if (end != null) {
                return Optional.empty();
            }
            Envelope frame = Envelope.read(response.body(), 1 << 24)
                    .orElseThrow(() -> new IOException("stream ended without an end-stream frame"));
            if (frame.isEndStream()) {
                end = EndStream.parse(frame.payload());
                return Optional.empty();
            }
            return Optional.of(format.parse(frame.payload(), prototype));
        }

        /** Reads every remaining message. */
        public List<R> rest() throws IOException {
            List<R> all = new ArrayList<>();
            for (Optional<R> m = next(); m.isPresent(); m = next()) {
                all.add(m.get());
            }
            return all;
        }

        public EndStream end() {
            if (end == null) {
                throw new IllegalStateException("the stream has not ended yet");
            }
            return end;
        }

        @Override
        public void close() throws IOException {
            response.body().close();
        }
    }
}
