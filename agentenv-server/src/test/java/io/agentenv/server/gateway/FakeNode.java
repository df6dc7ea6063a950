package io.agentenv.server.gateway;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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

/**
 * A stand-in for a node server behind a gateway. Every request is answered with JSON saying which node saw it and how
 * ({@code node, method, path, query, host, apiKey, body}), except: {@code /stream} (a first line, then the rest once
 * {@link #release} was called), {@code /ws} (a WebSocket that echoes text frames prefixed with the node's name), and
 * creates ({@code POST /sandboxes}) answered with {@link #createStatus}, and {@code GET /sandboxes/metrics} (every id
 * asked, with this node's name, answered with {@link #metricsStatus}).
 */
final class FakeNode implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    final String name;
    final AtomicInteger requests = new AtomicInteger();
    volatile int createStatus = 201;
    /** The id a create answers with as {@code sandboxID} (none when null). */
    volatile String createdId;
    /** The status of {@code GET /sandboxes/metrics}; its body names this node for every id asked. */
    volatile int metricsStatus = 200;

    private final Server server;
    private final ServerConnector connector;
    private final CountDownLatch gate = new CountDownLatch(1);
    final CountDownLatch firstLineSent = new CountDownLatch(1);
    private final WebSocketComponents components = new WebSocketComponents();
    private final Handshaker webSockets = Handshaker.newInstance();

    FakeNode(String name) throws Exception {
        this.name = name;
        server = new Server(new VirtualThreadPool());
        connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract(org.eclipse.jetty.util.thread.Invocable.InvocationType.BLOCKING) {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                requests.incrementAndGet();
                if (request.getHttpURI().getPath().endsWith("/ws")) {
                    return webSockets.upgradeRequest(
                            (rq, rs, cb) -> echo(), request, response, callback, components, null);
                }
                serve(request, response);
                callback.succeeded();
                return true;
            }
        });
        server.addBean(components, true);
        server.start();
    }

    URI address() {
        return URI.create("http://127.0.0.1:" + connector.getLocalPort());
    }

    void release() {
        gate.countDown();
    }

    private void serve(Request request, Response response) throws Exception {
        String path = request.getHttpURI().getPath();
        if (path.endsWith("/stream")) {
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
            write(response, "first\n", false);
            firstLineSent.countDown();
            gate.await(30, TimeUnit.SECONDS);
            write(response, "second\n", true);
            return;
        }
        if (path.equals("/sandboxes/metrics")) {
            ObjectNode sandboxes = JSON.createObjectNode();
            String ids = Request.extractQueryParameters(request).getValue("sandbox_ids");
            for (String id : ids.split(",")) {
                sandboxes.putObject(id).put("node", name).put("asked", ids);
            }
            response.setStatus(metricsStatus);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            ObjectNode answer = JSON.createObjectNode();
            answer.set("sandboxes", sandboxes);
            write(response, JSON.writeValueAsString(answer), true);
            return;
        }
        String body;
        try (InputStream in = Content.Source.asInputStream(request)) {
            body = new String(in.readAllBytes(), UTF_8);
        }
        ObjectNode json = JSON.createObjectNode()
                .put("node", name)
                .put("method", request.getMethod())
                .put("path", path)
                .put("query", request.getHttpURI().getQuery())
                .put("host", request.getHeaders().get(HttpHeader.HOST))
                .put("apiKey", request.getHeaders().get("X-API-Key"))
                .put("forwarded", request.getHeaders().get(HttpHeader.FORWARDED))
                .put("body", body);
        boolean create = request.getMethod().equals("POST") && path.equals("/sandboxes");
        if (create && createdId != null) {
            json.put("sandboxID", createdId);
        }
        response.setStatus(create ? createStatus : 200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        write(response, JSON.writeValueAsString(json), true);
    }

    private static void write(Response response, String text, boolean last) throws Exception {
        try (Blocker.Callback cb = Blocker.callback()) {
            response.write(last, ByteBuffer.wrap(text.getBytes(UTF_8)), cb);
            cb.block();
        }
    }

    private FrameHandler echo() {
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
                if (frame.getOpCode() == OpCode.TEXT) {
                    String text = name + ":" + BufferUtil.toString(frame.getPayload(), UTF_8);
                    session.sendFrame(
                            new Frame(OpCode.TEXT, true, text),
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

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
