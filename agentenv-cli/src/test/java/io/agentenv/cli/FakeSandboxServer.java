package io.agentenv.cli;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.agentenv.envd.protocol.connect.EndStream;
import io.agentenv.envd.protocol.connect.Envelope;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.StartResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The server as the CLI sees it, in-process: control-plane routes answered from a table, and envd behind the proxy
 * (requests with {@code E2b-Sandbox-Id}) answered by handlers a test installs per Connect procedure or {@code /files}.
 * The proxy's checks are kept: port 49983 and the sandbox's token, else 401 as the real proxy answers.
 */
final class FakeSandboxServer implements AutoCloseable {
    /** The codec aenv's envd client speaks (Connect errors are JSON whatever the codec). */
    static final WireFormat CODEC = WireFormat.PROTO;

    static final String KEY = "e2b_0123456789abcdef0123456789abcdef01234567";
    static final String ID = "abcdefghij0123456789";
    static final String TOKEN = "envd-token-secret-1234";

    /** A recorded request: method, path with query, the headers that matter, the body. */
    record Request(String method, String uri, Map<String, List<String>> headers, byte[] body) {
        String header(String name) {
            return headers.entrySet().stream()
                    .filter(e -> e.getKey().equalsIgnoreCase(name))
                    .map(e -> e.getValue().getFirst())
                    .findFirst()
                    .orElse(null);
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** Answers one envd request; the exchange is closed afterwards. */
    @FunctionalInterface
    interface Handler {
        void handle(Request request, HttpExchange exchange) throws IOException;
    }

    private final HttpServer http;
    final ConcurrentLinkedDeque<Request> requests = new ConcurrentLinkedDeque<>();
    private final Map<String, Handler> envd = new ConcurrentHashMap<>();
    private final Map<String, String[]> api = new ConcurrentHashMap<>();
    private final Map<String, Handler> apiHandlers = new ConcurrentHashMap<>();
    volatile String state = "running";

    FakeSandboxServer() throws IOException {
        http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.setExecutor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
        http.createContext("/", this::dispatch);
        http.start();
    }

    String url() {
        return "http://127.0.0.1:" + http.getAddress().getPort();
    }

    /** A control-plane answer for {@code "METHOD /path"} (path without the query). */
    void api(String route, int status, String body) {
        api.put(route, new String[] {Integer.toString(status), body});
    }

    /**
     * A control-plane route answered by a handler (for answers that change between requests); it is called before the
     * API key is checked, so that it also serves URLs the server hands out (an upload URL).
     */
    void api(String route, Handler handler) {
        apiHandlers.put(route, handler);
    }

    /** An envd answer for {@code "/process.Process/Start"}, {@code "/files"}, ... */
    void envd(String path, Handler handler) {
        envd.put(path, handler);
    }

    List<Request> envdRequests(String path) {
        return requests.stream()
                .filter(r -> r.header("E2b-Sandbox-Id") != null
                        && r.uri().split("\\?")[0].equals(path))
                .toList();
    }

    private void dispatch(HttpExchange ex) throws IOException {
        try (ex) {
            Request request = new Request(
                    ex.getRequestMethod(),
                    ex.getRequestURI().toString(),
                    Map.copyOf(ex.getRequestHeaders()),
                    ex.getRequestBody().readAllBytes());
            requests.add(request);
            String path = ex.getRequestURI().getRawPath();
            if (request.header("E2b-Sandbox-Id") != null) {
                if (!ID.equals(request.header("E2b-Sandbox-Id"))
                        || !"49983".equals(request.header("E2b-Sandbox-Port"))) {
                    json(ex, 502, "{\"code\":502,\"message\":\"The sandbox was not found\"}");
                } else if (!TOKEN.equals(request.header("X-Access-Token"))) {
                    json(ex, 401, "{\"code\":401,\"message\":\"invalid access token\"}");
                } else {
                    Handler handler = envd.get(path);
                    if (handler == null) {
                        json(ex, 404, "{\"code\":\"unimplemented\",\"message\":\"no handler for " + path + "\"}");
                    } else {
                        handler.handle(request, ex);
                    }
                }
                return;
            }
            Handler dynamic = apiHandlers.get(ex.getRequestMethod() + " " + path);
            if (dynamic != null) {
                dynamic.handle(request, ex);
                return;
            }
            if (!KEY.equals(request.header("X-API-Key"))) {
                json(ex, 401, "{\"code\":401,\"message\":\"invalid API key\"}");
                return;
            }
            if (ex.getRequestMethod().equals("GET") && path.equals("/sandboxes/" + ID)) {
                json(ex, 200, detail());
                return;
            }
            String[] answer = api.get(ex.getRequestMethod() + " " + path);
            if (answer == null) {
                json(ex, 404, "{\"code\":404,\"message\":\"sandbox not found\"}");
            } else {
                json(ex, Integer.parseInt(answer[0]), answer[1]);
            }
        }
    }

    private String detail() {
        return """
                {"templateID":"base","sandboxID":"%s","clientID":"","startedAt":"2026-01-01T00:00:00Z",
                 "endAt":"2026-01-01T00:05:00Z","envdVersion":"0.6.13","envdAccessToken":"%s","domain":null,"cpuCount":2,
                 "memoryMB":512,"diskSizeMB":1024,"metadata":{},"state":"%s","allowInternetAccess":null}""".formatted(ID, TOKEN, state);
    }

    static void json(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(status, status == 204 ? -1 : bytes.length);
        if (status != 204) {
            ex.getResponseBody().write(bytes);
        }
    }

    /** A unary Connect answer. */
    static void unary(HttpExchange ex, Message response) throws IOException {
        byte[] bytes = CODEC.serialize(response);
        ex.getResponseHeaders().add("Content-Type", CODEC.unaryContentType());
        ex.sendResponseHeaders(200, bytes.length == 0 ? -1 : bytes.length);
        ex.getResponseBody().write(bytes);
    }

    /** A unary Connect error. */
    static void unaryError(HttpExchange ex, RpcException error) throws IOException {
        json(ex, error.code().httpStatus(), new String(error.toJson(), StandardCharsets.UTF_8));
    }

    /** Starts a Connect server stream; write events with {@link #event} and finish with {@link #endStream}. */
    static OutputStream openStream(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().add("Content-Type", CODEC.streamContentType());
        ex.sendResponseHeaders(200, 0);
        return ex.getResponseBody();
    }

    static void event(OutputStream out, ProcessEvent event) throws IOException {
        out.write(Envelope.message(CODEC.serialize(
                        StartResponse.newBuilder().setEvent(event).build()))
                .encode());
        out.flush();
    }

    static void endStream(OutputStream out, EndStream end) throws IOException {
        end.toEnvelope().writeTo(out);
        out.flush();
    }

    static ProcessEvent start(int pid) {
        return ProcessEvent.newBuilder()
                .setStart(ProcessEvent.StartEvent.newBuilder().setPid(pid))
                .build();
    }

    static ProcessEvent stdout(String text) {
        return ProcessEvent.newBuilder()
                .setData(ProcessEvent.DataEvent.newBuilder().setStdout(ByteString.copyFromUtf8(text)))
                .build();
    }

    static ProcessEvent stderr(String text) {
        return ProcessEvent.newBuilder()
                .setData(ProcessEvent.DataEvent.newBuilder().setStderr(ByteString.copyFromUtf8(text)))
                .build();
    }

    static ProcessEvent exited(int code) {
        return ProcessEvent.newBuilder()
                .setEnd(ProcessEvent.EndEvent.newBuilder()
                        .setExitCode(code)
                        .setExited(true)
                        .setStatus("exit status " + code))
                .build();
    }

    /** The message inside a streaming request's one envelope. */
    static <T extends Message> T streamRequest(Request request, T prototype) throws IOException {
        Envelope envelope =
                Envelope.read(new ByteArrayInputStream(request.body()), 1 << 20).orElseThrow();
        return CODEC.parse(envelope.payload(), prototype);
    }

    static <T extends Message> T unaryRequest(Request request, T prototype) {
        return CODEC.parse(request.body(), prototype);
    }

    @Override
    public void close() {
        http.stop(0);
    }
}
