package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.NodeInfo;
import io.agentenv.server.proxy.WebSocketRelay;
import java.net.URI;
import java.time.Duration;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.ContainerLifeCycle;

/**
 * WebSocket upgrades through the gateway: relayed to the chosen node with every end-to-end header and the caller's
 * Host (the node's proxy routes by it), plus {@code X-Forwarded-*}. The node bridges on to the sandbox.
 */
final class GatewayWebSockets extends ContainerLifeCycle {
    private final WebSocketRelay relay;

    GatewayWebSockets(Duration connectTimeout, Duration headersTimeout, Duration idleTimeout) {
        this.relay = new WebSocketRelay(connectTimeout, headersTimeout, idleTimeout);
        addBean(relay, true);
    }

    static boolean isUpgrade(Request request) {
        return WebSocketRelay.isUpgrade(request);
    }

    void bridge(Request request, Response response, Callback callback, NodeInfo node) throws Exception {
        relay.relay(request, response, callback, new NodeHop(requireNonNull(node, "node is null"), request));
    }

    private record NodeHop(NodeInfo node, Request request) implements WebSocketRelay.Hop {
        @Override
        public URI target() {
            URI address = node.address();
            String scheme = "https".equals(address.getScheme()) ? "wss" : "ws";
            return URI.create(scheme + "://" + address.getRawAuthority()
                    + request.getHttpURI().getPathQuery());
        }

        @Override
        public Object tag() {
            return null;
        }

        @Override
        public void headers(Request in, HttpFields.Mutable out) {
            for (HttpField field : in.getHeaders()) {
                if (!WebSocketRelay.isHandshakeHeader(field.getLowerCaseName())) {
                    out.add(field);
                }
            }
            String host = in.getHeaders().get(HttpHeader.HOST);
            if (host != null) {
                out.put(HttpHeader.HOST, host);
                out.put(HttpHeader.X_FORWARDED_HOST, host);
            }
            out.put(HttpHeader.X_FORWARDED_FOR, Request.getRemoteAddr(in));
            out.put(HttpHeader.X_FORWARDED_PROTO, in.isSecure() ? "https" : "http");
        }

        @Override
        public String describe() {
            return "node " + node.id().value();
        }

        @Override
        public void opened(WebSocketRelay.Connection connection) {}

        @Override
        public void closed(WebSocketRelay.Connection connection) {}
    }
}
