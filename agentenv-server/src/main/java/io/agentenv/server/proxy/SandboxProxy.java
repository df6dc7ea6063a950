package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.LifecycleEvent;
import io.agentenv.orchestrator.LifecycleListener;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.server.credentials.ApiKey;
import io.agentenv.server.credentials.SandboxTokens;
import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox proxy, in front of the REST API on the same port. {@link RouteClassifier} decides whether a request is
 * for a sandbox (Host {@code <port>-<id>.<domain>}, the {@code E2b-Sandbox-Id}/{@code E2b-Sandbox-Port} headers,
 * {@code /proxy/<id>/<port>/...}, or a signed {@code /files} URL); everything else goes to the wrapped API handler.
 * {@link SandboxTargets} finds the target (auto-resuming paused sandboxes that ask for it) and checks tokens;
 * {@link UpstreamForwarder} streams the exchange. As a {@link LifecycleListener} it cuts a sandbox's open exchanges
 * when it is paused or killed and retires its connection pool on every lifecycle change.
 */
public final class SandboxProxy extends Handler.Wrapper implements LifecycleListener {
    private static final Logger log = LoggerFactory.getLogger(SandboxProxy.class);
    private static final String ROUTE_ATTRIBUTE = SandboxProxy.class.getName() + ".route";

    private final RouteClassifier classifier;
    private final SandboxTargets targets;
    private final UpstreamForwarder forwarder;
    private final WebSocketBridge webSockets;
    private final OpenStreams streams = new OpenStreams();
    private final Generations generations = new Generations();
    private final ExecutorService resumes = Executors.newVirtualThreadPerTaskExecutor();

    /** Subscribe the result to {@code orchestrator} ({@link Orchestrator#subscribe}) so that it sees lifecycle events. */
    public SandboxProxy(
            Orchestrator orchestrator, SandboxTokens tokens, ApiKey apiKey, ProxySettings settings, Clock clock) {
        this(orchestrator, orchestrator::route, tokens, apiKey, settings, clock);
    }

    /** With another per-request lookup in front of the orchestrator's (tests: a route that went stale). */
    SandboxProxy(
            Orchestrator orchestrator,
            SandboxTargets.Routes routes,
            SandboxTokens tokens,
            ApiKey apiKey,
            ProxySettings settings,
            Clock clock) {
        requireNonNull(settings, "settings is null");
        this.classifier = new RouteClassifier(settings.domains());
        this.targets = new SandboxTargets(orchestrator, routes, tokens, settings, generations, resumes, clock);
        this.forwarder = new UpstreamForwarder(settings, apiKey, this::reroute);
        this.webSockets = new WebSocketBridge(settings, apiKey);
        addBean(forwarder, true);
        addBean(webSockets, true);
    }

    /** Puts this proxy in front of {@code api} and returns the handler to install on the server. */
    public Handler inFrontOf(Handler api) {
        setHandler(requireNonNull(api, "api is null"));
        return this;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        HttpURI uri = request.getHttpURI();
        ProxyRoute route = classifier.classify(
                request.getMethod(),
                request.getHeaders().get(HttpHeader.HOST),
                uri.getPath(),
                uri.getQuery(),
                request.getHeaders());
        try {
            ProxyRoute.Targeted target = switch (route) {
                case ProxyRoute.ControlPlane ignored -> null;
                case ProxyRoute.Malformed malformed -> throw ProxyProblem.of(400, malformed.message());
                case ProxyRoute.SignedFiles signed -> targets.bySignature(signed, request.getMethod());
                case ProxyRoute.Targeted targeted -> targeted;
            };
            if (target == null) {
                return super.handle(request, response, callback);
            }
            Upstream upstream = targets.resolve(target, request.getMethod(), request.getHeaders());
            if (isWebSocketUpgrade(request)) {
                webSockets.bridge(request, response, callback, upstream, streams);
                return true;
            }
            OpenStreams.Exchange exchange = streams.open(upstream.sandbox(), response, callback);
            request.setAttribute(ROUTE_ATTRIBUTE, target);
            request.setAttribute(UpstreamForwarder.UPSTREAM_ATTRIBUTE, upstream);
            request.setAttribute(UpstreamForwarder.EXCHANGE_ATTRIBUTE, exchange);
            log.atDebug()
                    .addKeyValue("sandbox_id", upstream.sandbox().value())
                    .addKeyValue("port", upstream.sandboxPort())
                    .addKeyValue("method", request.getMethod())
                    .log("proxy: forwarding");
            try {
                return forwarder.handle(request, response, exchange);
            } catch (RuntimeException e) {
                exchange.failed(e); // unregisters it; Jetty answers or drops the connection
                return true;
            }
        } catch (ProxyProblem problem) {
            log.atDebug()
                    .addKeyValue("sandbox_id", problem.sandboxId().orElse("-"))
                    .addKeyValue("status", problem.status())
                    .addKeyValue("message", problem.getMessage())
                    .log("proxy: refused");
            ProblemReply.write(response, callback, problem);
            return true;
        }
    }

    /**
     * The request's upstream refused the connection: where it goes now, if that is somewhere else (the sandbox was
     * paused and resumed, or its instance replaced, between the lookup and the connect); empty otherwise.
     */
    private Optional<Upstream> reroute(Request request, Upstream refused) {
        if (!(request.getAttribute(ROUTE_ATTRIBUTE) instanceof ProxyRoute.Targeted target)) {
            return Optional.empty();
        }
        try {
            Upstream now = targets.resolve(target, request.getMethod(), request.getHeaders());
            boolean moved = !now.host().equals(refused.host())
                    || now.port() != refused.port()
                    || !now.unixSocket().equals(refused.unixSocket())
                    || !now.tag().equals(refused.tag());
            return moved ? Optional.of(now) : Optional.empty();
        } catch (ProxyProblem problem) {
            return Optional.empty(); // it is gone or paused now: the refused answer stands
        }
    }

    @Override
    public void onEvent(LifecycleEvent event) {
        switch (event) {
            case LifecycleEvent.Killed killed -> {
                stopped(killed.sandbox(), "was killed");
                targets.forget(killed.sandbox());
                generations.forget(killed.sandbox());
            }
            case LifecycleEvent.Paused paused -> stopped(paused.sandbox(), "was paused");
            case LifecycleEvent.Resumed resumed -> retirePools(resumed.sandbox());
            case LifecycleEvent.Created created -> retirePools(created.sandbox());
            case LifecycleEvent.Forked forked -> retirePools(forked.sandbox());
            case LifecycleEvent.SnapshotTaken ignored -> {}
            case LifecycleEvent.TimedOut ignored -> {} // the Paused or Killed event came first
        }
    }

    /** How many proxied exchanges of {@code sandbox} are open (for tests and diagnostics). */
    int openExchanges(SandboxId sandbox) {
        return streams.count(sandbox);
    }

    /** The forwarder is a bean, not the wrapped handler: it is told the server too (Jetty handlers need it). */
    @Override
    public void setServer(Server server) {
        super.setServer(server);
        forwarder.setServer(server);
    }

    @Override
    protected void doStop() throws Exception {
        super.doStop();
        resumes.shutdownNow();
    }

    private void stopped(SandboxId sandbox, String reason) {
        int cut = streams.cut(sandbox, reason);
        retirePools(sandbox);
        if (cut > 0) {
            log.atInfo()
                    .addKeyValue("sandbox_id", sandbox.value())
                    .addKeyValue("exchanges", cut)
                    .log("proxy: cut open exchanges of a stopped sandbox");
        }
    }

    /** A new generation: later requests get a new pool; the old pools' connections are closed. */
    private void retirePools(SandboxId sandbox) {
        generations.advance(sandbox);
        HttpClient client = forwarder.getHttpClient();
        if (client == null) {
            return;
        }
        for (Destination destination : client.getDestinations()) {
            if (destination.getOrigin().getTag() instanceof Generations.Tag tag
                    && tag.sandbox().equals(sandbox)
                    && !generations.isCurrent(tag)) {
                client.removeDestination(destination);
                LifeCycle.stop(destination);
            }
        }
    }

    private static boolean isWebSocketUpgrade(Request request) {
        return WebSocketBridge.isUpgrade(request);
    }
}
