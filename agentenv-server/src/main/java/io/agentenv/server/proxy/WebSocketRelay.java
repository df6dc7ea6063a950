package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.websocket.core.CloseStatus;
import org.eclipse.jetty.websocket.core.Configuration;
import org.eclipse.jetty.websocket.core.CoreSession;
import org.eclipse.jetty.websocket.core.Frame;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.OpCode;
import org.eclipse.jetty.websocket.core.WebSocketComponents;
import org.eclipse.jetty.websocket.core.client.CoreClientUpgradeRequest;
import org.eclipse.jetty.websocket.core.client.WebSocketCoreClient;
import org.eclipse.jetty.websocket.core.exception.UpgradeException;
import org.eclipse.jetty.websocket.core.server.Handshaker;
import org.eclipse.jetty.websocket.core.server.WebSocketNegotiator;

/**
 * Relays a WebSocket upgrade to the next hop with Jetty's WebSocket core: the next hop's handshake is made first (with
 * the caller's subprotocols and the headers the {@link Hop} chooses), and only when it accepted is the caller's
 * upgraded, with the subprotocol it selected. A refused handshake answers with the next hop's status. Then data and
 * close frames are relayed both ways, each sent before the next is read (back-pressure); pings and pongs stay per hop.
 * The sandbox proxy relays to a sandbox's port ({@link WebSocketBridge}), a gateway to the node that owns the sandbox.
 */
public final class WebSocketRelay extends ContainerLifeCycle {
    /** Handshake and hop-by-hop headers that the WebSocket client sets itself or that must not travel. */
    private static final Set<String> HANDSHAKE_HEADERS = Set.of(
            "host",
            "connection",
            "upgrade",
            "sec-websocket-key",
            "sec-websocket-version",
            "sec-websocket-extensions",
            "sec-websocket-protocol",
            "sec-websocket-accept",
            "keep-alive",
            "proxy-connection",
            "te",
            "trailer",
            "transfer-encoding",
            "content-length");

    /** Where one upgrade goes and what travels with it. */
    public interface Hop {
        /** The next hop's {@code ws://} URI. */
        URI target();

        /** The connection-pool tag of the next hop's connections (null: none). */
        Object tag();

        /** Adds the headers the next hop gets (never the handshake's own: {@link #isHandshakeHeader}). */
        void headers(Request request, HttpFields.Mutable out);

        /** Names the next hop in error messages ("sandbox ... port 8080", "node n1"). */
        String describe();

        /** The relay is open: it can be aborted from now on. */
        void opened(Connection connection);

        /** The relay closed. */
        void closed(Connection connection);
    }

    /** One relayed connection (both of its halves). */
    public interface Connection {
        /** Aborts both halves at once. */
        void abort(String reason);
    }

    private final Duration connectTimeout;
    private final Duration headersTimeout;
    private final WebSocketComponents components = new WebSocketComponents();
    private final WebSocketCoreClient client;
    private final Handshaker handshaker = Handshaker.newInstance();
    /** Both hops: idle as long as plain proxied connections may be (Jetty's WebSocket default is 30 s). */
    private final Configuration.ConfigurationCustomizer hopSettings = new Configuration.ConfigurationCustomizer();

    public WebSocketRelay(Duration connectTimeout, Duration headersTimeout, Duration idleTimeout) {
        this.connectTimeout = requireNonNull(connectTimeout, "connectTimeout is null");
        this.headersTimeout = requireNonNull(headersTimeout, "headersTimeout is null");
        HttpClient http = new HttpClient();
        http.setConnectTimeout(connectTimeout.toMillis());
        http.setUserAgentField(null);
        this.client = new WebSocketCoreClient(http, components);
        hopSettings.setIdleTimeout(requireNonNull(idleTimeout, "idleTimeout is null"));
        addBean(components, true);
        addBean(http, true);
        addBean(client, true);
    }

    /** Whether {@code request} asks for a WebSocket upgrade this relay can make. */
    public static boolean isUpgrade(Request request) {
        String upgrade = request.getHeaders().get(org.eclipse.jetty.http.HttpHeader.UPGRADE);
        return upgrade != null
                && upgrade.equalsIgnoreCase("websocket")
                && Handshaker.newInstance().isWebSocketUpgradeRequest(request);
    }

    /** True for a header the WebSocket handshake sets itself or that belongs to one hop only. */
    public static boolean isHandshakeHeader(String lowerCaseName) {
        return HANDSHAKE_HEADERS.contains(lowerCaseName);
    }

    /** Upgrades {@code request} when the next hop accepts; otherwise answers with its refusal or a 502/504. */
    public void relay(Request request, Response response, Callback callback, Hop hop) throws Exception {
        WebSocketNegotiator negotiator = (upgradeRequest, upgradeResponse, negotiation) -> {
            Pair pair = new Pair(hop);
            CoreClientUpgradeRequest out = CoreClientUpgradeRequest.from(client, hop.target(), pair.upstreamSide);
            if (hop.tag() != null) {
                out.tag(hop.tag());
            }
            out.setConfiguration(hopSettings);
            out.setSubProtocols(upgradeRequest.getSubProtocols());
            out.headers(headers -> hop.headers(request, headers));
            CoreSession upstreamSession;
            try {
                long limit = connectTimeout.plus(headersTimeout).toMillis();
                upstreamSession = client.connect(out).get(limit, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                ProblemReply.write(upgradeResponse, negotiation, refusal(hop, e.getCause()));
                return null;
            } catch (TimeoutException e) {
                ProblemReply.write(
                        upgradeResponse, negotiation, ProxyProblem.of(504, hop.describe() + " did not answer in time"));
                return null;
            } catch (InterruptedException | java.io.IOException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                ProblemReply.write(
                        upgradeResponse, negotiation, ProxyProblem.of(502, hop.describe() + " is not reachable"));
                return null;
            }
            pair.upstream.complete(upstreamSession);
            String protocol = upstreamSession.getNegotiatedSubProtocol();
            if (protocol != null && !protocol.isEmpty()) {
                upgradeResponse.setAcceptedSubProtocol(protocol);
            }
            return pair.clientSide;
        };
        if (!handshaker.upgradeRequest(negotiator, request, response, callback, components, hopSettings)) {
            ProblemReply.write(response, callback, ProxyProblem.of(400, "not a valid WebSocket upgrade"));
        }
    }

    private static ProxyProblem refusal(Hop hop, Throwable cause) {
        if (cause instanceof UpgradeException u && u.getResponseStatusCode() > 0) {
            return ProxyProblem.of(u.getResponseStatusCode(), hop.describe() + " refused the WebSocket upgrade");
        }
        return ProxyProblem.of(502, hop.describe() + " is not reachable");
    }

    /** The two halves of one relayed connection. */
    private static final class Pair implements Connection {
        final CompletableFuture<CoreSession> upstream = new CompletableFuture<>();
        final CompletableFuture<CoreSession> client = new CompletableFuture<>();
        final FrameHandler clientSide;
        final FrameHandler upstreamSide;
        private final Hop hop;

        Pair(Hop hop) {
            this.hop = hop;
            this.clientSide = new Half(client, upstream, true);
            this.upstreamSide = new Half(upstream, client, false);
        }

        @Override
        public void abort(String reason) {
            upstream.thenAccept(CoreSession::abort);
            client.thenAccept(CoreSession::abort);
        }

        /** Receives on one connection and sends on the other. */
        private final class Half implements FrameHandler {
            private final CompletableFuture<CoreSession> self;
            private final CompletableFuture<CoreSession> peer;
            private final boolean reports;

            Half(CompletableFuture<CoreSession> self, CompletableFuture<CoreSession> peer, boolean reports) {
                this.self = self;
                this.peer = peer;
                this.reports = reports;
            }

            @Override
            public void onOpen(CoreSession session, Callback callback) {
                self.complete(session);
                if (reports) {
                    hop.opened(Pair.this);
                }
                callback.succeeded();
                session.demand();
            }

            @Override
            public void onFrame(Frame frame, Callback callback) {
                byte op = frame.getOpCode();
                if (op == OpCode.PING || op == OpCode.PONG) {
                    callback.succeeded(); // answered per hop by Jetty
                    self.thenAccept(CoreSession::demand);
                    return;
                }
                Frame copy = unmasked(frame);
                peer.thenAccept(other -> other.sendFrame(
                        copy,
                        Callback.from(
                                () -> {
                                    callback.succeeded();
                                    if (op != OpCode.CLOSE) {
                                        self.thenAccept(CoreSession::demand);
                                    }
                                },
                                callback::failed),
                        false));
            }

            @Override
            public void onError(Throwable cause, Callback callback) {
                callback.succeeded();
            }

            @Override
            public void onClosed(CloseStatus status, Callback callback) {
                if (reports) {
                    hop.closed(Pair.this);
                }
                peer.thenAccept(other -> other.close(normalized(status), Callback.NOOP));
                callback.succeeded();
            }

            /** A copy the other connection can send: its own masking applies (client frames arrive masked). */
            private static Frame unmasked(Frame frame) {
                return new Frame(frame.getOpCode(), frame.isFin(), BufferUtil.copy(frame.getPayload()));
            }

            private static CloseStatus normalized(CloseStatus status) {
                int code = status.getCode();
                return CloseStatus.isTransmittableStatusCode(code) ? status : new CloseStatus(CloseStatus.NORMAL, "");
            }
        }
    }
}
