package io.agentenv.server.api;

import java.time.Duration;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Tells HTTP/1.1 clients how long this server keeps an idle connection open ({@code Keep-Alive: timeout=N}), so they
 * keep theirs as long instead of closing it after their own default. The E2B SDK's HTTP client (undici) closes an idle
 * connection after 4 s unless the server names a timeout (then that minus 2 s), so a client creating sandboxes a few
 * seconds apart opened two new connections per create (one for the API, one for envd through the proxy; 40 for a burst
 * of 20 creates and first commands: docs/benchmarks.md, "Keep-alive hint"), each a TCP handshake, an accept and a
 * connection set-up on both sides.
 * The advertised time stays well below the connector's idle timeout: a client must never send on a connection the
 * server is closing (a request on it fails, and a POST is not retried). Wraps the proxy and the API alike.
 */
final class KeepAliveHint extends Handler.Wrapper {
    /** How long the connector keeps an idle connection (Jetty's default is 30 s). */
    static final Duration CONNECTION_IDLE_TIMEOUT = Duration.ofSeconds(75);
    /** What clients are told: 15 s below the idle timeout. */
    static final Duration ADVERTISED = Duration.ofSeconds(60);

    private static final HttpField FIELD =
            new PreEncodedHttpField(HttpHeader.KEEP_ALIVE, "timeout=" + ADVERTISED.toSeconds());

    KeepAliveHint(Handler next) {
        super(next);
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        if (request.getConnectionMetaData().getHttpVersion() == HttpVersion.HTTP_1_1) {
            response.getHeaders().add(FIELD);
        }
        return super.handle(request, response, callback);
    }
}
