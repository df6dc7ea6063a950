package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import java.net.URI;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bridges a WebSocket upgrade to the sandbox with Jetty's WebSocket core: the upstream handshake is made first (with the
 * caller's subprotocols and end-to-end headers), and only when the sandbox accepted is the caller's upgraded, with the
 * subprotocol the sandbox selected. A refused upstream handshake answers with the sandbox's status. Then data and
 * close frames are relayed both ways, each sent before the next is read (back-pressure); pings and pongs stay per hop.
 * A bridge registers with {@link OpenStreams}, so killing or pausing the sandbox aborts both connections.
 */
final class WebSocketBridge extends ContainerLifeCycle {
    private static final Logger log = LoggerFactory.getLogger(WebSocketBridge.class);
    /** Handshake and hop-by-hop headers that the WebSocket client sets itself or that must not travel. */
    private static final Set<String> NOT_COPIED = Set.of(
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
            "content-length",
            "e2b-sandbox-id",
            "e2b-sandbox-port",
            "x-agentenv-sandbox-id",
            "x-agentenv-target-port",
            SandboxTargets.TRAFFIC_TOKEN_HEADER.toLowerCase(java.util.Locale.ROOT));

    private final ProxySettings settings;
    private final io.agentenv.server.credentials.ApiKey apiKey;
    private final WebSocketComponents components = new WebSocketComponents();
    private final WebSocketCoreClient client;
    private final Handshaker handshaker = Handshaker.newInstance();
    /** Both hops: idle as long as plain proxied connections may be (Jetty's WebSocket default is 30 s). */
    private final Configuration.ConfigurationCustomizer hopSettings = new Configuration.ConfigurationCustomizer();

    WebSocketBridge(ProxySettings settings, io.agentenv.server.credentials.ApiKey apiKey) {
        this.settings = requireNonNull(settings, "settings is null");
        this.apiKey = requireNonNull(apiKey, "apiKey is null");
        HttpClient http = new HttpClient();
        http.setConnectTimeout(settings.connectTimeout().toMillis());
        http.setUserAgentField(null);
        this.client = new WebSocketCoreClient(http, components);
        hopSettings.setIdleTimeout(settings.idleTimeout());
        addBean(components, true);
        addBean(http, true);
        addBean(client, true);
    }

    static boolean isUpgrade(Request request) {
        return Handshaker.newInstance().isWebSocketUpgradeRequest(request);
    }

    /** Upgrades {@code request} when the sandbox accepts; otherwise answers with the sandbox's refusal or a 502/504. */
    void bridge(Request request, Response response, Callback callback, Upstream upstream, OpenStreams streams)
            throws Exception {
        WebSocketNegotiator negotiator = (upgradeRequest, upgradeResponse, negotiation) -> {
            Relay relay = new Relay(upstream, streams);
            CoreClientUpgradeRequest out = CoreClientUpgradeRequest.from(client, target(upstream), relay.upstreamSide);
            out.tag(upstream.tag());
            out.setConfiguration(hopSettings);
            out.setSubProtocols(upgradeRequest.getSubProtocols());
            out.headers(headers -> {
                for (HttpField field : request.getHeaders()) {
                    String name = field.getLowerCaseName();
                    if (NOT_COPIED.contains(name)
                            || (name.equals("x-access-token") && !upstream.forwardAccessToken())
                            || (name.equals("x-api-key") && apiKey.matches(field.getValue()))) {
                        continue;
                    }
                    headers.add(field);
                }
                String host = request.getHeaders().get(HttpHeader.HOST);
                if (host != null) {
                    headers.put(HttpHeader.X_FORWARDED_HOST, host);
                }
                headers.put(HttpHeader.X_FORWARDED_FOR, Request.getRemoteAddr(request));
                headers.put(HttpHeader.X_FORWARDED_PROTO, request.isSecure() ? "https" : "http");
                upstream.hostHeader().ifPresent(masked -> headers.put(HttpHeader.HOST, masked));
            });
            CoreSession upstreamSession;
            try {
                long limit = settings.connectTimeout()
                        .plus(settings.headersTimeout())
                        .toMillis();
                upstreamSession = client.connect(out).get(limit, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                ProblemReply.write(upgradeResponse, negotiation, refusal(upstream, e.getCause()));
                return null;
            } catch (TimeoutException e) {
                ProblemReply.write(
                        upgradeResponse,
                        negotiation,
                        ProxyProblem.of(
                                504,
                                "sandbox " + upstream.sandbox().value() + " port " + upstream.sandboxPort()
                                        + " did not answer in time"));
                return null;
            } catch (InterruptedException | java.io.IOException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                ProblemReply.write(
                        upgradeResponse,
                        negotiation,
                        ProxyProblem.of(
                                502,
                                "sandbox " + upstream.sandbox().value() + " port " + upstream.sandboxPort()
                                        + " is not reachable"));
                return null;
            }
            relay.upstream.complete(upstreamSession);
            String protocol = upstreamSession.getNegotiatedSubProtocol();
            if (protocol != null && !protocol.isEmpty()) {
                upgradeResponse.setAcceptedSubProtocol(protocol);
            }
            return relay.clientSide;
        };
        if (!handshaker.upgradeRequest(negotiator, request, response, callback, components, hopSettings)) {
            ProblemReply.write(response, callback, ProxyProblem.of(400, "not a valid WebSocket upgrade"));
        }
    }

    private static URI target(Upstream upstream) {
        return URI.create("ws://" + upstream.host() + ":" + upstream.port() + upstream.pathAndQuery());
    }

    private static ProxyProblem refusal(Upstream upstream, Throwable cause) {
        if (cause instanceof UpgradeException u && u.getResponseStatusCode() > 0) {
            return ProxyProblem.of(
                    u.getResponseStatusCode(),
                    "sandbox " + upstream.sandbox().value() + " port " + upstream.sandboxPort()
                            + " refused the WebSocket upgrade");
        }
        return ProxyProblem.of(
                502, "sandbox " + upstream.sandbox().value() + " port " + upstream.sandboxPort() + " is not reachable");
    }

    /** The two halves of one bridged connection. */
    private static final class Relay implements OpenStreams.Cuttable {
        final CompletableFuture<CoreSession> upstream = new CompletableFuture<>();
        final CompletableFuture<CoreSession> client = new CompletableFuture<>();
        final FrameHandler clientSide;
        final FrameHandler upstreamSide;
        private final Upstream target;
        private final OpenStreams streams;

        Relay(Upstream target, OpenStreams streams) {
            this.target = target;
            this.streams = streams;
            this.clientSide = new Half(client, upstream, true);
            this.upstreamSide = new Half(upstream, client, false);
        }

        @Override
        public void cut(String reason) {
            log.atDebug()
                    .addKeyValue("sandbox_id", target.sandbox().value())
                    .addKeyValue("reason", reason)
                    .log("proxy: aborting a bridged WebSocket");
            upstream.thenAccept(CoreSession::abort);
            client.thenAccept(CoreSession::abort);
        }

        /** Receives on one connection and sends on the other. */
        private final class Half implements FrameHandler {
            private final CompletableFuture<CoreSession> self;
            private final CompletableFuture<CoreSession> peer;
            private final boolean registers;

            Half(CompletableFuture<CoreSession> self, CompletableFuture<CoreSession> peer, boolean registers) {
                this.self = self;
                this.peer = peer;
                this.registers = registers;
            }

            @Override
            public void onOpen(CoreSession session, Callback callback) {
                self.complete(session);
                if (registers) {
                    streams.register(target.sandbox(), Relay.this);
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
                if (registers) {
                    streams.unregister(target.sandbox(), Relay.this);
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
