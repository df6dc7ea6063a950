package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import io.agentenv.server.credentials.ApiKey;
import java.net.URI;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bridges a WebSocket upgrade to a sandbox's port through {@link WebSocketRelay}: the caller's end-to-end headers
 * travel except the routing headers, the traffic token, an {@code X-Access-Token} the proxy did not accept and the
 * platform API key; {@code X-Forwarded-*} are added and a masked Host replaces the caller's. A bridge registers with
 * {@link OpenStreams}, so killing or pausing the sandbox aborts both connections.
 */
final class WebSocketBridge extends ContainerLifeCycle {
    private static final Logger log = LoggerFactory.getLogger(WebSocketBridge.class);
    /** Headers for the proxy only, never the sandbox's. */
    private static final Set<String> ROUTING_HEADERS = Set.of(
            "e2b-sandbox-id",
            "e2b-sandbox-port",
            "x-agentenv-sandbox-id",
            "x-agentenv-target-port",
            SandboxTargets.TRAFFIC_TOKEN_HEADER.toLowerCase(Locale.ROOT));

    private final ApiKey apiKey;
    private final WebSocketRelay relay;

    WebSocketBridge(ProxySettings settings, ApiKey apiKey) {
        requireNonNull(settings, "settings is null");
        this.apiKey = requireNonNull(apiKey, "apiKey is null");
        this.relay = new WebSocketRelay(settings.connectTimeout(), settings.headersTimeout(), settings.idleTimeout());
        addBean(relay, true);
    }

    static boolean isUpgrade(Request request) {
        return WebSocketRelay.isUpgrade(request);
    }

    /** Upgrades {@code request} when the sandbox accepts; otherwise answers with the sandbox's refusal or a 502/504. */
    void bridge(Request request, Response response, Callback callback, Upstream upstream, OpenStreams streams)
            throws Exception {
        relay.relay(request, response, callback, new SandboxHop(upstream, streams));
    }

    /** The hop to one sandbox port. */
    private final class SandboxHop implements WebSocketRelay.Hop {
        private final Upstream upstream;
        private final OpenStreams streams;
        private final Map<WebSocketRelay.Connection, OpenStreams.Cuttable> registered = new ConcurrentHashMap<>();

        SandboxHop(Upstream upstream, OpenStreams streams) {
            this.upstream = upstream;
            this.streams = streams;
        }

        @Override
        public URI target() {
            return URI.create("ws://" + upstream.host() + ":" + upstream.port() + upstream.pathAndQuery());
        }

        @Override
        public Object tag() {
            return upstream.tag();
        }

        @Override
        public void headers(Request request, HttpFields.Mutable out) {
            for (HttpField field : request.getHeaders()) {
                String name = field.getLowerCaseName();
                if (WebSocketRelay.isHandshakeHeader(name)
                        || ROUTING_HEADERS.contains(name)
                        || (name.equals("x-access-token") && !upstream.forwardAccessToken())
                        || (name.equals("x-api-key") && apiKey.matches(field.getValue()))) {
                    continue;
                }
                out.add(field);
            }
            String host = request.getHeaders().get(HttpHeader.HOST);
            if (host != null) {
                out.put(HttpHeader.X_FORWARDED_HOST, host);
            }
            out.put(HttpHeader.X_FORWARDED_FOR, Request.getRemoteAddr(request));
            out.put(HttpHeader.X_FORWARDED_PROTO, request.isSecure() ? "https" : "http");
            upstream.hostHeader().ifPresent(masked -> out.put(HttpHeader.HOST, masked));
        }

        @Override
        public String describe() {
            return "sandbox " + upstream.sandbox().value() + " port " + upstream.sandboxPort();
        }

        @Override
        public void opened(WebSocketRelay.Connection connection) {
            OpenStreams.Cuttable cuttable = reason -> {
                log.atDebug()
                        .addKeyValue("sandbox_id", upstream.sandbox().value())
                        .addKeyValue("reason", reason)
                        .log("proxy: aborting a bridged WebSocket");
                connection.abort(reason);
            };
            registered.put(connection, cuttable);
            streams.register(upstream.sandbox(), cuttable);
        }

        @Override
        public void closed(WebSocketRelay.Connection connection) {
            OpenStreams.Cuttable cuttable = registered.remove(connection);
            if (cuttable != null) {
                streams.unregister(upstream.sandbox(), cuttable);
            }
        }
    }
}
