package io.agentenv.envd.client;

import static java.util.Objects.requireNonNull;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * How {@link EnvdClient}'s requests reach envd: {@link DirectTransport} to an envd the caller reaches itself (a
 * backend: TCP or a unix socket, pooled keep-alive connections, on Jetty's client), {@link ProxyTransport} through the
 * server's sandbox proxy (the CLI: the JDK's client, so that a short-lived process loads neither Jetty nor a logger).
 * A transport moves bytes; what the requests and answers mean is {@link EnvdClient}'s.
 */
public interface EnvdTransport extends AutoCloseable {

    /**
     * Sends {@code request}; the caller closes the answer. Throws {@link IOException} when no answer came (refused,
     * reset, timed out).
     */
    Answer send(Request request) throws IOException, InterruptedException;

    /** Closes the transport's connections. Idempotent. */
    @Override
    void close();

    /**
     * One request.
     *
     * @param path     the absolute path, e.g. {@code /health} or {@code /process.Process/Start}
     * @param query    the raw (already encoded) query, without {@code ?}
     * @param timeout  a buffered answer: the whole exchange; a streamed one: until its headers have come
     * @param streamed the answer's body is read as it arrives (a Connect server stream, a download) instead of
     *                 buffered whole (at most the transport's limit)
     */
    record Request(
            String method,
            String path,
            Optional<String> query,
            Map<String, String> headers,
            Optional<Body> body,
            Duration timeout,
            boolean streamed) {
        public Request {
            requireNonNull(method, "method is null");
            requireNonNull(path, "path is null");
            requireNonNull(query, "query is null");
            headers = Map.copyOf(headers);
            requireNonNull(body, "body is null");
            requireNonNull(timeout, "timeout is null");
            if (!path.startsWith("/")) {
                throw new IllegalArgumentException("path must start with /: " + path);
            }
        }
    }

    /** A request body: bytes in hand, or a stream opened when the request is sent. */
    sealed interface Body {
        String contentType();

        /** Bytes in hand. */
        record Bytes(String contentType, byte[] bytes) implements Body {
            public Bytes {
                requireNonNull(contentType, "contentType is null");
                requireNonNull(bytes, "bytes is null");
            }
        }

        /**
         * A stream, read as it is sent; {@code length} is its byte count (sent as Content-Length), or -1 when unknown
         * (the body is sent chunked).
         */
        record Stream(String contentType, long length, Supplier<InputStream> open) implements Body {
            public Stream {
                requireNonNull(contentType, "contentType is null");
                requireNonNull(open, "open is null");
                if (length < -1) {
                    throw new IllegalArgumentException("length must be >= -1, got " + length);
                }
            }
        }
    }

    /** envd's (or the proxy's) answer. Closing it releases the connection. */
    interface Answer extends Closeable {
        int status();

        Optional<String> header(String name);

        /** The body: all of it for a buffered request, as it arrives for a streamed one. */
        InputStream body();

        @Override
        void close();
    }
}
