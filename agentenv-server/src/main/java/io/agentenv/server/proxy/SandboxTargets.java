package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.Cursor;
import io.agentenv.orchestrator.ErrorKind;
import io.agentenv.orchestrator.GuestRoute;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.Page;
import io.agentenv.orchestrator.SandboxQuery;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxView;
import io.agentenv.orchestrator.SortOrder;
import io.agentenv.server.credentials.SandboxTokens;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxId;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpFields;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a routed request into an {@link Upstream}, or a {@link ProxyProblem}: finds the sandbox's guest endpoint
 * (resuming a paused sandbox with autoResume first), and checks its tokens.
 * <ul>
 *   <li>Unknown, killed or paused without autoResume: 502 "The sandbox was not found". A sandbox in a transition
 *       that ends RUNNING (snapshot or fork capture, resume, create) is waited for, bounded.</li>
 *   <li>Envd's port of a secure sandbox: {@code X-Access-Token} must be its envd token, except {@code /health} and a
 *       {@code /files} request whose signature was made with that token (an expired one is 401 "signature is already
 *       expired").</li>
 *   <li>Other ports of a sandbox created with {@code allowPublicTraffic=false}: {@code e2b-traffic-access-token} must
 *       be its traffic token (403 otherwise).</li>
 *   <li>Other ports of a sandbox created with {@code network.maskRequestHost}: the request carries that Host, with
 *       {@code ${PORT}} replaced by the port (the caller's Host goes in {@code X-Forwarded-Host}).</li>
 * </ul>
 * Tokens are compared in constant time and never logged.
 */
final class SandboxTargets {
    private static final Logger log = LoggerFactory.getLogger(SandboxTargets.class);
    static final String ACCESS_TOKEN_HEADER = "X-Access-Token";
    static final String TRAFFIC_TOKEN_HEADER = "e2b-traffic-access-token";
    private static final int SIGNATURE_SCAN_PAGE = 500;
    static final String PORT_PLACEHOLDER = "${PORT}";

    /** The per-request lookup: {@link Orchestrator#route} (memory only); tests put a fake in front of it. */
    @FunctionalInterface
    interface Routes {
        GuestRoute route(SandboxId id);
    }

    private final Orchestrator orchestrator;
    private final Routes routes;
    private final SandboxTokens tokens;
    private final ProxySettings settings;
    private final Generations generations;
    private final ExecutorService resumes;
    private final Clock clock;
    /** Each sandbox's envd token (an HMAC per derivation), kept until the sandbox is killed. */
    private final Map<SandboxId, String> envdTokens = new ConcurrentHashMap<>();

    SandboxTargets(
            Orchestrator orchestrator,
            Routes routes,
            SandboxTokens tokens,
            ProxySettings settings,
            Generations generations,
            ExecutorService resumes,
            Clock clock) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.routes = requireNonNull(routes, "routes is null");
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.settings = requireNonNull(settings, "settings is null");
        this.generations = requireNonNull(generations, "generations is null");
        this.resumes = requireNonNull(resumes, "resumes is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /**
     * Where {@code route} goes now. Reads only memory ({@link Orchestrator#route}) unless the sandbox is paused with
     * autoResume or in a transition, which are waited out first.
     */
    Upstream resolve(ProxyRoute.Targeted route, String method, HttpFields headers) throws ProxyProblem {
        SandboxId id = new SandboxId(route.sandboxId());
        GuestRoute guest = running(id);
        GuestEndpoint endpoint = guest.endpoint().orElseThrow();
        String path = pathOf(route.pathAndQuery());
        if (route.port() == settings.envdPort()) {
            String presented = headers.get(ACCESS_TOKEN_HEADER);
            boolean validToken = matches(presented, envdToken(id));
            if (guest.secure() && !validToken && !"/health".equals(path)) {
                checkSignature(id, route.pathAndQuery(), path, method, presented != null);
            }
            return new Upstream(
                    id,
                    route.port(),
                    endpoint.host(),
                    endpoint.port(),
                    endpoint.unixSocket(),
                    route.pathAndQuery(),
                    generations.current(id),
                    validToken,
                    Optional.empty());
        }
        if (guest.publicTraffic() == NetworkPolicy.PublicTraffic.TOKEN_REQUIRED
                && !matches(headers.get(TRAFFIC_TOKEN_HEADER), tokens.trafficAccessToken(id.value()))) {
            throw ProxyProblem.of(403, "missing or invalid " + TRAFFIC_TOKEN_HEADER + " for sandbox " + id.value());
        }
        return new Upstream(
                id,
                route.port(),
                endpoint.host(),
                route.port(),
                Optional.empty(),
                route.pathAndQuery(),
                generations.current(id),
                false,
                maskedHost(guest, route.port()));
    }

    /**
     * The sandbox whose envd token made the signature: every RUNNING sandbox's token is tried (one HMAC and one
     * SHA-256 each, plus a store read per 500 sandboxes), so the cost grows with the number of running sandboxes.
     */
    ProxyRoute.Targeted bySignature(ProxyRoute.SignedFiles route, String method) throws ProxyProblem {
        int q = route.pathAndQuery().indexOf('?');
        SignedUrl signed = SignedUrl.parse(q < 0 ? "" : route.pathAndQuery().substring(q + 1))
                .orElseThrow(() -> ProxyProblem.of(401, "invalid signature"));
        String operation = SignedUrl.operation(method).orElseThrow(() -> ProxyProblem.of(401, "invalid signature"));
        Optional<Cursor> after = Optional.empty();
        do {
            Page<SandboxView> page = orchestrator.list(new SandboxQuery(
                    EnumSet.of(SandboxState.RUNNING),
                    Map.of(),
                    Optional.empty(),
                    Optional.empty(),
                    SortOrder.DESC,
                    SIGNATURE_SCAN_PAGE,
                    after));
            for (SandboxView view : page.items()) {
                if (signed.signedWith(tokens.envdAccessToken(view.id().value()), operation)) {
                    return new ProxyRoute.Targeted(view.id().value(), settings.envdPort(), route.pathAndQuery());
                }
            }
            after = page.next();
        } while (after.isPresent());
        throw ProxyProblem.of(401, "invalid signature");
    }

    /**
     * The Host header for a request to {@code port} (never envd's): the sandbox's {@code maskRequestHost} with
     * {@code ${PORT}} replaced by the port, as E2B's proxy does; empty when the sandbox has no mask.
     */
    static Optional<String> maskedHost(GuestRoute guest, int port) {
        return guest.maskRequestHost().map(mask -> mask.replace(PORT_PLACEHOLDER, Integer.toString(port)));
    }

    /** The sandbox was killed: its token is no longer needed. */
    void forget(SandboxId id) {
        envdTokens.remove(id);
    }

    private String envdToken(SandboxId id) {
        return envdTokens.computeIfAbsent(id, k -> tokens.envdAccessToken(k.value()));
    }

    private void checkSignature(SandboxId id, String pathAndQuery, String path, String method, boolean tokenSent)
            throws ProxyProblem {
        int q = pathAndQuery.indexOf('?');
        Optional<SignedUrl> signed =
                "/files".equals(path) && q >= 0 ? SignedUrl.parse(pathAndQuery.substring(q + 1)) : Optional.empty();
        if (signed.isEmpty()) {
            throw ProxyProblem.of(401, tokenSent ? "invalid " + ACCESS_TOKEN_HEADER : "missing " + ACCESS_TOKEN_HEADER);
        }
        Optional<String> operation = SignedUrl.operation(method);
        if (operation.isEmpty() || !signed.get().signedWith(envdToken(id), operation.get())) {
            throw ProxyProblem.of(401, "invalid signature");
        }
        if (signed.get().expired(clock.instant())) {
            throw ProxyProblem.of(401, "signature is already expired");
        }
    }

    /** The sandbox's route with an endpoint: paused with autoResume, resumed; in a transition, waited out (bounded). */
    private GuestRoute running(SandboxId id) throws ProxyProblem {
        GuestRoute guest = route(id);
        if (guest.endpoint().isPresent()) {
            return guest;
        }
        switch (guest.state()) {
            case PAUSED, PAUSING -> {
                if (!guest.autoResume()) {
                    throw ProxyProblem.sandboxNotFound(id.value());
                }
                log.atInfo()
                        .addKeyValue("sandbox_id", id.value())
                        .log("proxy: auto-resuming a paused sandbox on traffic");
                connect(id, settings.autoResumeTtl());
            }
            // a transition that ends RUNNING (a snapshot or fork capture, a resume, a create): wait it out, bounded;
            // connect with a zero timeout joins it and leaves the TTL as it is
            case CREATING, RESUMING, SNAPSHOTTING, FORKING -> connect(id, Duration.ZERO);
            case RUNNING, KILLING -> throw ProxyProblem.sandboxNotFound(id.value());
        }
        GuestRoute after = route(id);
        if (after.endpoint().isEmpty()) {
            throw ProxyProblem.sandboxNotFound(id.value());
        }
        return after;
    }

    /**
     * {@link Orchestrator#connect} on the proxy's executor (TTL at least {@code ttl}; a paused sandbox is resumed, a
     * transition is waited out); the request waits at most {@code autoResumeTimeout}.
     */
    private void connect(SandboxId id, Duration ttl) throws ProxyProblem {
        Future<?> resume = resumes.submit(() -> orchestrator.connect(id, ttl));
        try {
            resume.get(settings.autoResumeTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            resume.cancel(true);
            throw ProxyProblem.of(504, "sandbox " + id.value() + " did not become ready in time");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ProxyProblem.of(503, "interrupted while resuming sandbox " + id.value());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof AgentEnvException a && a.kind() == ErrorKind.NOT_FOUND) {
                throw ProxyProblem.sandboxNotFound(id.value());
            }
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e.getCause())
                    .log("proxy: auto-resume failed");
            throw ProxyProblem.of(502, "sandbox " + id.value() + " could not be resumed");
        }
    }

    private GuestRoute route(SandboxId id) throws ProxyProblem {
        try {
            return routes.route(id);
        } catch (AgentEnvException e) {
            if (e.kind() == ErrorKind.NOT_FOUND) {
                throw ProxyProblem.sandboxNotFound(id.value());
            }
            throw ProxyProblem.of(503, "sandbox " + id.value() + " is not available: " + e.getMessage());
        }
    }

    private static boolean matches(String presented, String expected) {
        return presented != null && MessageDigest.isEqual(presented.getBytes(UTF_8), expected.getBytes(UTF_8));
    }

    private static String pathOf(String pathAndQuery) {
        int q = pathAndQuery.indexOf('?');
        return q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
    }
}
