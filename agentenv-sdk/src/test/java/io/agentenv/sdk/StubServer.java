package io.agentenv.sdk;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/** A tiny scripted HTTP server standing in for the control plane and envd in unit tests. */
final class StubServer implements AutoCloseable {
    /** One recorded request. */
    record Request(String method, String path, String query, Map<String, List<String>> headers, byte[] body) {
        String header(String name) {
            return headers.entrySet().stream()
                    .filter(e -> e.getKey().equalsIgnoreCase(name))
                    .findFirst()
                    .map(e -> e.getValue().get(0))
                    .orElse(null);
        }

        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** Answers one request. */
    interface Handler {
        void handle(HttpExchange exchange, Request request) throws IOException;
    }

    private final HttpServer server;
    private final Map<String, Handler> routes = new ConcurrentHashMap<>();
    final List<Request> requests = new CopyOnWriteArrayList<>();

    StubServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", exchange -> {
            Request request = new Request(
                    exchange.getRequestMethod(),
                    exchange.getRequestURI().getPath(),
                    exchange.getRequestURI().getRawQuery(),
                    Map.copyOf(exchange.getRequestHeaders()),
                    exchange.getRequestBody().readAllBytes());
            requests.add(request);
            Handler handler = routes.get(request.method() + " " + request.path());
            try {
                if (handler == null) {
                    reply(exchange, 404, "application/json", "{\"code\":404,\"message\":\"no stub route\"}");
                } else {
                    handler.handle(exchange, request);
                }
            } finally {
                exchange.close();
            }
        });
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    StubServer on(String method, String path, Handler handler) {
        routes.put(method + " " + path, handler);
        return this;
    }

    StubServer json(String method, String path, int status, String body) {
        return on(method, path, (ex, r) -> reply(ex, status, "application/json", body));
    }

    Request last(String path) {
        for (int i = requests.size() - 1; i >= 0; i--) {
            if (requests.get(i).path().equals(path)) {
                return requests.get(i);
            }
        }
        throw new AssertionError("no request to " + path + " in " + requests);
    }

    static void reply(HttpExchange ex, int status, String contentType, String body) throws IOException {
        reply(ex, status, contentType, body.getBytes(StandardCharsets.UTF_8));
    }

    static void reply(HttpExchange ex, int status, String contentType, byte[] body) throws IOException {
        if (contentType != null) {
            ex.getResponseHeaders().set("Content-Type", contentType);
        }
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    /** A Connect envelope: flags, big-endian length, payload. */
    static byte[] envelope(int flags, byte[] payload) {
        byte[] out = new byte[5 + payload.length];
        out[0] = (byte) flags;
        out[1] = (byte) (payload.length >>> 24);
        out[2] = (byte) (payload.length >>> 16);
        out[3] = (byte) (payload.length >>> 8);
        out[4] = (byte) payload.length;
        System.arraycopy(payload, 0, out, 5, payload.length);
        return out;
    }

    /** A streaming answer: the messages, then the end-of-stream envelope with {@code endJson}. */
    static Handler stream(List<byte[]> messages, String endJson) {
        return (ex, r) -> {
            ex.getResponseHeaders().set("Content-Type", "application/connect+proto");
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = ex.getResponseBody()) {
                for (byte[] m : messages) {
                    out.write(envelope(0, m));
                }
                if (endJson != null) {
                    out.write(envelope(2, endJson.getBytes(StandardCharsets.UTF_8)));
                }
            }
        };
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
