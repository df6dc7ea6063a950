package io.agentenv.envd.client;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * A small HTTP server that answers what a test scripts per path (status and body), and records what it got: request
 * lines, the {@code X-Access-Token} header and the connection each request came on. Listens on TCP and on a unix
 * socket.
 */
final class ScriptedEnvdServer implements AutoCloseable {
    record Answer(int status, String contentType, byte[] body) {
        /** A JSON answer (or none, when {@code body} is empty). */
        Answer(int status, String body) {
            this(status, "application/json", body.getBytes(StandardCharsets.UTF_8));
        }
    }

    record Seen(String method, String pathAndQuery, String token, String connection, String contentType, String body) {}

    /** A handler that does something itself (for example waits on a latch) before answering. */
    @FunctionalInterface
    interface Behaviour {
        Answer answer(Request request) throws Exception;
    }

    private final Server server = new Server();
    private final ServerConnector tcp = new ServerConnector(server);
    private final UnixDomainServerConnector unix = new UnixDomainServerConnector(server);
    private final Map<String, Behaviour> routes = new ConcurrentHashMap<>();
    private final List<Seen> seen = new CopyOnWriteArrayList<>();

    ScriptedEnvdServer(Path socket) throws Exception {
        tcp.setHost("127.0.0.1");
        tcp.setPort(0);
        unix.setUnixDomainPath(socket);
        server.addConnector(tcp);
        server.addConnector(unix);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                String body = org.eclipse.jetty.io.Content.Source.asString(request, StandardCharsets.UTF_8);
                String query = request.getHttpURI().getQuery();
                seen.add(new Seen(
                        request.getMethod(),
                        request.getHttpURI().getPath() + (query == null ? "" : "?" + query),
                        request.getHeaders().get("X-Access-Token"),
                        request.getConnectionMetaData().getId(),
                        request.getHeaders().get(HttpHeader.CONTENT_TYPE),
                        body));
                Behaviour behaviour = routes.get(request.getHttpURI().getPath());
                Answer answer = behaviour == null
                        ? new Answer(404, "{\"code\":404,\"message\":\"no route\"}")
                        : behaviour.answer(request);
                response.setStatus(answer.status());
                if (answer.body().length == 0) {
                    callback.succeeded();
                } else {
                    response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
                    response.write(true, ByteBuffer.wrap(answer.body()), callback);
                }
                return true;
            }
        });
        server.start();
    }

    int port() {
        return tcp.getLocalPort();
    }

    void answer(String path, int status, String body) {
        routes.put(path, request -> new Answer(status, body));
    }

    void answer(String path, int status, String contentType, byte[] body) {
        routes.put(path, request -> new Answer(status, contentType, body));
    }

    void behave(String path, Behaviour behaviour) {
        routes.put(path, behaviour);
    }

    List<Seen> seen() {
        return List.copyOf(seen);
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
