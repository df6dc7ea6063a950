package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;

/**
 * The response side of one exchange. Set headers, then send exactly one of: a complete body ({@link #send}), no body
 * ({@link #sendEmpty}), a body of known length ({@link #fixedLength}) or a chunked stream ({@link #stream}) whose
 * {@code flush()} puts everything written so far on the wire as one chunk. Starting a complete response first reads
 * the rest of the request body, if the endpoint left any.
 */
public final class EnvdResponse {
    private final HttpExchange exchange;
    private final EnvdRequest request;
    private boolean committed;

    EnvdResponse(HttpExchange exchange, EnvdRequest request) {
        this.exchange = requireNonNull(exchange, "exchange is null");
        this.request = requireNonNull(request, "request is null");
    }

    /** Sets (replaces) a response header. */
    public EnvdResponse header(String name, String value) {
        exchange.getResponseHeaders().set(name, value);
        return this;
    }

    /** The response header's value so far, or null. */
    public String header(String name) {
        return exchange.getResponseHeaders().getFirst(name);
    }

    public EnvdResponse removeHeader(String name) {
        exchange.getResponseHeaders().remove(name);
        return this;
    }

    /** True once the status line has been sent: from then on an error can only abort the connection. */
    public boolean committed() {
        return committed;
    }

    public void send(int status, String contentType, byte[] body) throws IOException {
        header("Content-Type", contentType);
        try (OutputStream out = fixedLength(status, body.length)) {
            out.write(body);
        }
    }

    /** A status without a body ({@code Content-Length: 0}, or no length at all for 204 and 304). */
    public void sendEmpty(int status) throws IOException {
        commit(status, -1);
        exchange.getResponseBody().close();
    }

    /** A body of exactly {@code length} bytes; close the stream when done. */
    public OutputStream fixedLength(int status, long length) throws IOException {
        if (length < 0) {
            throw new IllegalArgumentException("negative length " + length);
        }
        if (length == 0) {
            sendEmpty(status);
            return OutputStream.nullOutputStream();
        }
        commit(status, length);
        return exchange.getResponseBody();
    }

    /** A chunked body: each {@code flush()} sends what was written since the last one; close the stream to end it. */
    public OutputStream stream(int status) throws IOException {
        commit(status, 0);
        return exchange.getResponseBody();
    }

    private void commit(int status, long length) throws IOException {
        if (committed) {
            throw new IllegalStateException("response already started");
        }
        committed = true;
        if (length != 0) {
            drainRequest();
        }
        exchange.sendResponseHeaders(status, length);
    }

    /**
     * Before a complete response (the endpoint is done with the request), reads what is left of the request body: an
     * upload refused half-way (e.g. 507) would otherwise leave unread input, the JDK server closes such a connection
     * as soon as the response is written, and closing a socket with unread input makes the kernel reset it, which can
     * destroy the response before the client reads it. A client that stops sending ends the drain by closing.
     */
    private void drainRequest() {
        try {
            request.drain();
        } catch (IOException e) {
            // the client is gone or the body was already closed: nothing to protect
        }
    }
}
