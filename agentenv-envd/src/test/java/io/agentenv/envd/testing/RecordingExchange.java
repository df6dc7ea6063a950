package io.agentenv.envd.testing;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * An exchange that records what its response body would put on the wire, write by write, as the JDK's server does it:
 * its response streams write into the connection's buffer, which goes out at a {@code flush()} (one write) and at the
 * stream's {@code close()} (the last chunk and the terminating chunk together: sun.net.httpserver.ChunkedOutputStream
 * writes both, then flushes once). Each recorded segment is one such write.
 */
public final class RecordingExchange extends HttpExchange {
    private final String method;
    private final URI uri;
    private final Headers requestHeaders = new Headers();
    private final Headers responseHeaders = new Headers();
    private final InputStream requestBody;
    private final Map<String, Object> attributes = new HashMap<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final List<byte[]> segments = new ArrayList<>(); // guarded by lock
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream(); // guarded by lock
    private boolean closed; // guarded by lock
    private int status = -1;

    public RecordingExchange(String method, String path, Map<String, String> headers, byte[] body) {
        this.method = method;
        this.uri = URI.create(path);
        headers.forEach(requestHeaders::set);
        this.requestBody = new ByteArrayInputStream(body);
    }

    /** The writes so far, each as it would reach the client. */
    public List<byte[]> segments() {
        lock.lock();
        try {
            return List.copyOf(segments);
        } finally {
            lock.unlock();
        }
    }

    /** Waits until a write matches, or fails after {@code timeout}. */
    public byte[] awaitSegment(Predicate<byte[]> matching, Duration timeout)
            throws InterruptedException, TimeoutException {
        long left = timeout.toNanos();
        lock.lock();
        try {
            while (true) {
                for (byte[] segment : segments) {
                    if (matching.test(segment)) {
                        return segment;
                    }
                }
                if (left <= 0) {
                    throw new TimeoutException("no matching write within " + timeout + "; writes: " + segments.size());
                }
                left = changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Waits until the response body was closed (the exchange's last write). */
    public void awaitClosed(Duration timeout) throws InterruptedException, TimeoutException {
        long left = timeout.toNanos();
        lock.lock();
        try {
            while (!closed) {
                if (left <= 0) {
                    throw new TimeoutException("the response was not closed within " + timeout);
                }
                left = changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    private void emit(boolean close) {
        lock.lock();
        try {
            if (pending.size() > 0) {
                segments.add(pending.toByteArray());
                pending.reset();
            }
            closed |= close;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private final OutputStream body = new OutputStream() {
        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) {
            lock.lock();
            try {
                pending.write(bytes, offset, length);
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void flush() {
            emit(false);
        }

        @Override
        public void close() {
            emit(true);
        }
    };

    @Override
    public Headers getRequestHeaders() {
        return requestHeaders;
    }

    @Override
    public Headers getResponseHeaders() {
        return responseHeaders;
    }

    @Override
    public URI getRequestURI() {
        return uri;
    }

    @Override
    public String getRequestMethod() {
        return method;
    }

    @Override
    public HttpContext getHttpContext() {
        throw new UnsupportedOperationException("not used by envd");
    }

    @Override
    public void close() {
        emit(true);
    }

    @Override
    public InputStream getRequestBody() {
        return requestBody;
    }

    @Override
    public OutputStream getResponseBody() {
        return body;
    }

    @Override
    public void sendResponseHeaders(int rCode, long responseLength) {
        status = rCode; // the JDK writes the headers into the connection's buffer: they leave with the first write
    }

    @Override
    public InetSocketAddress getRemoteAddress() {
        return new InetSocketAddress("127.0.0.1", 40000);
    }

    @Override
    public int getResponseCode() {
        return status;
    }

    @Override
    public InetSocketAddress getLocalAddress() {
        return new InetSocketAddress("127.0.0.1", 49983);
    }

    @Override
    public String getProtocol() {
        return "HTTP/1.1";
    }

    @Override
    public Object getAttribute(String name) {
        return attributes.get(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
        attributes.put(name, value);
    }

    @Override
    public void setStreams(InputStream i, OutputStream o) {
        throw new UnsupportedOperationException("not used by envd");
    }

    @Override
    public HttpPrincipal getPrincipal() {
        return null;
    }
}
