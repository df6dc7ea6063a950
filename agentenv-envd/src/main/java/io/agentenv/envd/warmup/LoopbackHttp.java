package io.agentenv.envd.warmup;

import static java.util.Objects.requireNonNull;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * A bare HTTP/1.1 client for envd's own listeners, used by its request warm-up ({@link RequestPathWarmup}): one
 * connection, requests one after another, keep-alive unless a side says {@code Connection: close}, response bodies by {@code Content-Length}, chunks or end of stream. Written here rather
 * than taken from {@code java.net.http}: a client library's classes would end up in the AOT cache and in the heap of
 * every checkpointed envd (dumped again at every pause), and envd only ever talks to itself with it.
 */
final class LoopbackHttp implements Closeable {
    private static final int MAX_LINE = 16 * 1024;
    private static final int MAX_BODY = 16 * 1024 * 1024;

    /** A response: its status and body (chunked bodies de-chunked). */
    record Response(int status, byte[] body) {
        Response {
            requireNonNull(body, "body is null");
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private final Closeable connection;
    private final InputStream in;
    private final OutputStream out;
    private boolean open = true;

    private LoopbackHttp(Closeable connection, InputStream in, OutputStream out) {
        this.connection = connection;
        this.in = new BufferedInputStream(in);
        this.out = out;
    }

    /** A connection to envd's TCP listener on the loopback address; every read waits at most {@code timeout}. */
    static LoopbackHttp tcp(int port, Duration timeout) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        try {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(Math.toIntExact(timeout.toMillis()));
            return new LoopbackHttp(socket, socket.getInputStream(), socket.getOutputStream());
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /**
     * A connection to envd's unix socket (the host's way in, relayed to the TCP listener); every read and write waits
     * at most {@code timeout} (a unix channel has no {@code SO_TIMEOUT}: it is non-blocking, waited on by a selector).
     */
    static LoopbackHttp unix(Path socket, Duration timeout) throws IOException {
        long millis = timeout.toMillis();
        if (millis <= 0) {
            throw new IllegalArgumentException("timeout must be at least 1 ms: " + timeout);
        }
        SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket));
        try {
            TimedChannel timed = new TimedChannel(channel, millis);
            return new LoopbackHttp(timed, timed.in(), timed.out());
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Whether the next request can still go over this connection. */
    boolean isOpen() {
        return open;
    }

    /**
     * Sends one request and reads its whole response.
     *
     * @param headers extra header lines ({@code Name: value}); {@code Host} and, with a body, {@code Content-Length}
     *                are added
     * @param body    the request body, or null for none
     */
    Response send(String method, String target, List<String> headers, byte[] body) throws IOException {
        if (!open) {
            throw new IOException("connection closed after the previous response");
        }
        StringBuilder head = new StringBuilder(256)
                .append(method)
                .append(' ')
                .append(target)
                .append(" HTTP/1.1\r\nHost: localhost\r\n");
        boolean closeAfter = false;
        for (String header : headers) {
            head.append(header).append("\r\n");
            closeAfter |= header.equalsIgnoreCase("Connection: close");
        }
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
        if (body != null) {
            out.write(body);
        }
        out.flush();
        Response response = read(method);
        if (closeAfter) {
            open = false;
        }
        return response;
    }

    private Response read(String method) throws IOException {
        String statusLine = line();
        if (!statusLine.startsWith("HTTP/1.1 ") || statusLine.length() < 12) {
            throw new IOException("not an HTTP/1.1 status line: " + statusLine);
        }
        int status = Integer.parseInt(statusLine, 9, 12, 10);
        long length = -1;
        boolean chunked = false;
        for (String header = line(); !header.isEmpty(); header = line()) {
            int colon = header.indexOf(':');
            if (colon < 0) {
                throw new IOException("malformed header line: " + header);
            }
            String name = header.substring(0, colon).strip().toLowerCase(Locale.ROOT);
            String value = header.substring(colon + 1).strip();
            switch (name) {
                case "content-length" -> length = Long.parseLong(value);
                case "transfer-encoding" ->
                    chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                case "connection" -> open &= !value.equalsIgnoreCase("close");
                default -> {
                    // not needed to find the body's end
                }
            }
        }
        if (status / 100 == 1) {
            return read(method); // an interim response (100 Continue): the real one follows
        }
        byte[] body;
        if (method.equals("HEAD") || status == 204 || status == 304) {
            body = new byte[0];
        } else if (chunked) {
            body = chunks();
        } else if (length >= 0) {
            body = exactly(length);
        } else {
            body = in.readNBytes(MAX_BODY + 1);
            open = false;
        }
        if (body.length > MAX_BODY) {
            throw new IOException("response body larger than " + MAX_BODY + " bytes");
        }
        return new Response(status, body);
    }

    private byte[] chunks() throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            String sizeLine = line();
            int extension = sizeLine.indexOf(';');
            long size = Long.parseLong((extension < 0 ? sizeLine : sizeLine.substring(0, extension)).strip(), 16);
            if (size == 0) {
                while (!line().isEmpty()) {
                    // trailer fields: not used
                }
                return body.toByteArray();
            }
            if (body.size() + size > MAX_BODY) {
                throw new IOException("response body larger than " + MAX_BODY + " bytes");
            }
            body.write(exactly(size));
            if (!line().isEmpty()) {
                throw new IOException("chunk not followed by CRLF");
            }
        }
    }

    private byte[] exactly(long length) throws IOException {
        if (length > MAX_BODY) {
            throw new IOException("response body larger than " + MAX_BODY + " bytes");
        }
        byte[] bytes = in.readNBytes((int) length);
        if (bytes.length < length) {
            throw new EOFException("response body ended after " + bytes.length + " of " + length + " bytes");
        }
        return bytes;
    }

    /** One line without its CRLF (or LF). */
    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(64);
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new EOFException("connection closed mid-response");
            }
            if (line.size() == MAX_LINE) {
                throw new IOException("response line longer than " + MAX_LINE + " bytes");
            }
            line.write(b);
        }
        byte[] bytes = line.toByteArray();
        int end = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
        return new String(bytes, 0, end, StandardCharsets.US_ASCII);
    }

    /** A Connect streaming request body: one uncompressed envelope around {@code json}. */
    static byte[] envelope(String json) {
        byte[] payload = json.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + payload.length)
                .put((byte) 0)
                .putInt(payload.length)
                .put(payload)
                .array();
    }

    @Override
    public void close() throws IOException {
        open = false;
        connection.close();
    }

    /** A non-blocking channel whose reads and writes wait on a selector, at most {@code millis} each. */
    private static final class TimedChannel implements Closeable {
        private final SocketChannel channel;
        private final Selector selector;
        private final SelectionKey key;
        private final long millis;

        TimedChannel(SocketChannel channel, long millis) throws IOException {
            this.channel = channel;
            this.millis = millis;
            channel.configureBlocking(false);
            this.selector = Selector.open();
            try {
                this.key = channel.register(selector, 0);
            } catch (IOException | RuntimeException e) {
                selector.close();
                throw e;
            }
        }

        /** Waits until the channel is ready for {@code op}; {@link SocketTimeoutException} after {@code millis}. */
        private void await(int op) throws IOException {
            key.interestOps(op);
            if (selector.select(millis) == 0) {
                throw new SocketTimeoutException("no answer from envd's unix socket within " + millis + " ms");
            }
            selector.selectedKeys().clear();
        }

        InputStream in() {
            return new InputStream() {
                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
                }

                @Override
                public int read(byte[] bytes, int offset, int length) throws IOException {
                    if (length == 0) {
                        return 0;
                    }
                    ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, length);
                    int read = channel.read(buffer);
                    while (read == 0) {
                        await(SelectionKey.OP_READ);
                        read = channel.read(buffer);
                    }
                    return read;
                }
            };
        }

        OutputStream out() {
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] bytes, int offset, int length) throws IOException {
                    ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, length);
                    while (buffer.hasRemaining()) {
                        if (channel.write(buffer) == 0) {
                            await(SelectionKey.OP_WRITE);
                        }
                    }
                }
            };
        }

        @Override
        public void close() throws IOException {
            try (selector) {
                channel.close();
            }
        }
    }
}
