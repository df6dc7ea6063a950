package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.VirtualThreadPool;
import org.eclipse.jetty.websocket.core.CloseStatus;
import org.eclipse.jetty.websocket.core.CoreSession;
import org.eclipse.jetty.websocket.core.Frame;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.OpCode;
import org.eclipse.jetty.websocket.core.WebSocketComponents;
import org.eclipse.jetty.websocket.core.server.Handshaker;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeRequest;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeResponse;

/**
 * An in-process HTTP server standing in for envd or a user's server inside a sandbox. Paths:
 * {@code /headers} (the request's headers, one {@code name: value} line each), {@code /chunks} and {@code /sse} (a
 * first part, then the rest only once {@link #release} was called), {@code /upload} (SHA-256 and length of the body),
 * {@code /download?bytes=N}, {@code /hold} (answers only after {@link #release}), {@code /health} (200 "upstream").
 * It records the client port of every request, so tests can tell connections apart.
 */
final class FakeUpstream implements AutoCloseable {
    private final Server server;
    private final ServerConnector connector;
    private volatile CountDownLatch gate = new CountDownLatch(1);
    final List<Integer> clientPorts = new CopyOnWriteArrayList<>();
    final List<String> paths = new CopyOnWriteArrayList<>();
    final CountDownLatch firstPartSent = new CountDownLatch(1);
    final List<HttpFields> wsHeaders = new CopyOnWriteArrayList<>();
    private final WebSocketComponents components = new WebSocketComponents();
    private final Handshaker webSockets = Handshaker.newInstance();

    FakeUpstream() throws Exception {
        VirtualThreadPool threads = new VirtualThreadPool();
        server = new Server(threads);
        connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract(org.eclipse.jetty.util.thread.Invocable.InvocationType.BLOCKING) {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                if (request.getHttpURI().getPath().equals("/ws")) {
                    clientPorts.add(Request.getRemotePort(request));
                    wsHeaders.add(request.getHeaders().asImmutable());
                    return webSockets.upgradeRequest(FakeUpstream::echo, request, response, callback, components, null);
                }
                serve(request, response);
                callback.succeeded();
                return true;
            }
        });
        server.addBean(components, true);
        server.start();
    }

    /** /ws: accepts the first offered subprotocol and echoes every text or binary frame. */
    private static FrameHandler echo(ServerUpgradeRequest request, ServerUpgradeResponse response, Callback callback) {
        if (!request.getSubProtocols().isEmpty()) {
            response.setAcceptedSubProtocol(request.getSubProtocols().getFirst());
        }
        return new FrameHandler() {
            private CoreSession session;

            @Override
            public void onOpen(CoreSession coreSession, Callback cb) {
                session = coreSession;
                cb.succeeded();
                session.demand();
            }

            @Override
            public void onFrame(Frame frame, Callback cb) {
                if (frame.getOpCode() == OpCode.TEXT || frame.getOpCode() == OpCode.BINARY) {
                    session.sendFrame(
                            new Frame(frame.getOpCode(), frame.isFin(), BufferUtil.copy(frame.getPayload())),
                            Callback.from(
                                    () -> {
                                        cb.succeeded();
                                        session.demand();
                                    },
                                    cb::failed),
                            false);
                } else {
                    cb.succeeded();
                    session.demand();
                }
            }

            @Override
            public void onError(Throwable cause, Callback cb) {
                cb.succeeded();
            }

            @Override
            public void onClosed(CloseStatus closeStatus, Callback cb) {
                cb.succeeded();
            }
        };
    }

    int port() {
        return connector.getLocalPort();
    }

    /** Lets held responses continue. */
    void release() {
        gate.countDown();
    }

    private void serve(Request request, Response response) throws Exception {
        clientPorts.add(Request.getRemotePort(request));
        String path = request.getHttpURI().getPath();
        paths.add(request.getHttpURI().getPathQuery());
        switch (path) {
            case "/headers" -> {
                StringBuilder text = new StringBuilder();
                for (HttpField field : request.getHeaders()) {
                    text.append(field.getLowerCaseName())
                            .append(": ")
                            .append(field.getValue())
                            .append('\n');
                }
                write(response, "text/plain", text.toString(), true);
            }
            case "/health" -> write(response, "text/plain", "upstream", true);
            case "/chunks", "/sse" -> {
                boolean sse = path.equals("/sse");
                String type = sse ? "text/event-stream" : "text/plain";
                write(response, type, sse ? "data: one\n\n" : "first\n", false);
                firstPartSent.countDown();
                gate.await(30, TimeUnit.SECONDS);
                write(response, type, sse ? "data: two\n\n" : "second\n", true);
            }
            case "/upload" -> {
                MessageDigest sha = MessageDigest.getInstance("SHA-256");
                long length = 0;
                try (InputStream in = Content.Source.asInputStream(request)) {
                    byte[] buffer = new byte[65536];
                    for (int n; (n = in.read(buffer)) > 0; ) {
                        sha.update(buffer, 0, n);
                        length += n;
                    }
                }
                write(response, "text/plain", length + " " + HexFormat.of().formatHex(sha.digest()), true);
            }
            case "/download" -> {
                long bytes =
                        Long.parseLong(Request.extractQueryParameters(request).getValue("bytes"));
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
                byte[] chunk = pattern(65536);
                for (long sent = 0; sent < bytes; ) {
                    int n = (int) Math.min(chunk.length, bytes - sent);
                    sent += n;
                    try (Blocker.Callback cb = Blocker.callback()) {
                        response.write(sent == bytes, ByteBuffer.wrap(chunk, 0, n), cb);
                        cb.block();
                    }
                }
            }
            case "/hold" -> {
                gate.await(30, TimeUnit.SECONDS);
                write(response, "text/plain", "held", true);
            }
            default -> {
                response.setStatus(404);
                write(response, "text/plain", "no such path " + path, true);
            }
        }
    }

    /** The bytes /download sends, repeated. */
    static byte[] pattern(int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i % 251);
        }
        return bytes;
    }

    private static void write(Response response, String type, String text, boolean last) throws Exception {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        try (Blocker.Callback cb = Blocker.callback()) {
            response.write(last, ByteBuffer.wrap(text.getBytes(UTF_8)), cb);
            cb.block();
        }
    }

    @Override
    public void close() throws Exception {
        release();
        server.stop();
    }
}
