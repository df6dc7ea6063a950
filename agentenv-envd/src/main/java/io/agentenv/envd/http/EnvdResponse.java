package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import com.sun.net.httpserver.HttpExchange;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * The response side of one exchange. Set headers, then send exactly one of: a complete body ({@link #send}), no body
 * ({@link #sendEmpty}), a body of known length ({@link #fixedLength}) or a chunked stream ({@link #stream}) whose
 * {@code flush()} puts everything written so far on the wire as one chunk. Starting a complete response first reads
 * a bounded part of what the endpoint left of the request body (see {@link #commit}).
 */
public final class EnvdResponse {
    /** What is read of a leftover request body before a complete response; a body that ends within it keeps the connection. */
    static final long DRAIN_BEFORE = 64 << 10;
    /** What more is read, after the complete response is on the wire, before the connection closes. */
    static final long DRAIN_AFTER = 4 << 20;
    /**
     * {@link #DRAIN_AFTER} for a body the endpoint admitted ({@link EnvdRequest#admitBody}): a proxy that forwards an
     * upload reads the answer only as its sender allows, and under load 4 MiB were sent before it had (the reset then
     * destroyed the answer: a 507 became "not reachable").
     */
    static final long DRAIN_AFTER_ADMITTED = 1L << 30;

    private final HttpExchange exchange;
    private final EnvdRequest request;
    private boolean committed;
    private boolean lingering;

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

    /**
     * A status without a body ({@code Content-Length: 0}, or no length at all for 204 and 304). The JDK server ends such
     * an exchange as soon as the headers are out, so a leftover request body larger than {@link #DRAIN_BEFORE} gets no
     * lingering read after it (no envd endpoint answers without a body while leaving one unread).
     */
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
        OutputStream body = exchange.getResponseBody();
        return lingering ? new LingeringClose(body) : body;
    }

    /** A chunked body: each {@code flush()} sends what was written since the last one; close the stream to end it. */
    public OutputStream stream(int status) throws IOException {
        commit(status, 0);
        return exchange.getResponseBody();
    }

    /**
     * Before a complete response (the endpoint is done with the request), reads up to {@link #DRAIN_BEFORE} of what is
     * left of the request body. If more is left (e.g. an upload refused half-way, with 507 or 401), the response says
     * {@code Connection: close} and the rest is not read to its end: the JDK server closes the connection after the
     * response, and closing a socket with unread input makes the kernel reset it, which can destroy the response before
     * the client reads it. So the body of such a response is flushed first and up to {@link #DRAIN_AFTER} more is read
     * (a lingering close) before the connection closes; a client that stops sending ends that read by closing.
     */
    private void commit(int status, long length) throws IOException {
        if (committed) {
            throw new IllegalStateException("response already started");
        }
        committed = true;
        if (length != 0 && !drain(DRAIN_BEFORE)) {
            lingering = true;
            header("Connection", "close");
        }
        exchange.sendResponseHeaders(status, length);
    }

    /** True if the request body ended within {@code limit}; an unreadable body counts as ended (nothing to protect). */
    private boolean drain(long limit) {
        try {
            return request.drain(limit);
        } catch (IOException e) {
            // the client is gone or the body was already closed: nothing to protect
            return true;
        }
    }

    /** The body of a response that ends its connection: on close it goes out first, then the request is drained. */
    private final class LingeringClose extends FilterOutputStream {
        LingeringClose(OutputStream body) {
            super(body);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            out.write(bytes, offset, length);
        }

        @Override
        public void close() throws IOException {
            out.flush();
            drain(request.bodyAdmitted() ? DRAIN_AFTER_ADMITTED : DRAIN_AFTER);
            out.close();
        }
    }
}
