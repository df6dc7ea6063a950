package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import io.agentenv.server.credentials.ApiKey;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.Transport;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.SocketAddressResolver;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jetty's reverse proxy, pointed at the {@link Upstream} that {@link SandboxProxy} resolved (a request attribute).
 * Jetty streams both bodies chunk by chunk with back-pressure and strips hop-by-hop headers both ways; this class
 * adds what the sandbox proxy needs on top: the unix-socket transport for envd, one connection pool per sandbox
 * generation (request tag), the routing/credential headers removed, {@code X-Forwarded-*} added, a response-headers
 * timeout (504), JSON errors, and response bytes that arrived together forwarded together ({@link CoalescingResponse}).
 */
final class UpstreamForwarder extends ProxyHandler {
    private static final Logger log = LoggerFactory.getLogger(UpstreamForwarder.class);
    static final String UPSTREAM_ATTRIBUTE = UpstreamForwarder.class.getName() + ".upstream";
    static final String EXCHANGE_ATTRIBUTE = UpstreamForwarder.class.getName() + ".exchange";
    private static final List<String> STRIPPED = List.of(
            "E2b-Sandbox-Id",
            "x-agentenv-sandbox-id",
            "E2b-Sandbox-Port",
            "x-agentenv-target-port",
            SandboxTargets.TRAFFIC_TOKEN_HEADER);

    private static final String REROUTED_ATTRIBUTE = UpstreamForwarder.class.getName() + ".rerouted";

    /** Where a request whose upstream refused the connection goes now, if somewhere else. */
    @FunctionalInterface
    interface Reroute {
        Optional<Upstream> after(Request request, Upstream refused);
    }

    private final ProxySettings settings;
    private final ApiKey apiKey;
    private final Reroute reroute;

    UpstreamForwarder(ProxySettings settings, ApiKey apiKey, Reroute reroute) {
        this.settings = requireNonNull(settings, "settings is null");
        this.apiKey = requireNonNull(apiKey, "apiKey is null");
        this.reroute = requireNonNull(reroute, "reroute is null");
    }

    @Override
    protected HttpClient newHttpClient() {
        HttpClient client = super.newHttpClient(); // HTTP/1.1 only, as envd and sandbox servers speak it
        if (client.getExecutor() instanceof QueuedThreadPool threads) {
            threads.setName("aenv-proxy-client");
        }
        return client;
    }

    @Override
    protected void configureHttpClient(HttpClient client) {
        super.configureHttpClient(client);
        client.setConnectTimeout(settings.connectTimeout().toMillis());
        client.setIdleTimeout(settings.idleTimeout().toMillis());
        client.setMaxConnectionsPerDestination(4096); // every open stream holds one HTTP/1.1 connection
        client.setMaxRequestsQueuedPerDestination(4096);
        client.setDestinationIdleTimeout(60_000); // pools of past generations go away
        client.setUserAgentField(null); // the caller's User-Agent is copied, none is added
        // Upstream hosts are a backend's guest addresses (IP literals; "localhost" for a unix socket): resolved on the
        // request's own (virtual) thread, where resolving a literal is parsing, instead of a hop to the client's pool
        // plus a scheduled time-out per new connection
        client.setSocketAddressResolver(new SocketAddressResolver.Sync());
    }

    @Override
    protected HttpURI rewriteHttpURI(Request request) {
        Upstream upstream = upstream(request);
        String host = upstream.unixSocket().isPresent() ? "localhost" : upstream.host();
        return HttpURI.build().scheme("http").host(host).port(upstream.port()).pathQuery(upstream.pathAndQuery());
    }

    @Override
    protected org.eclipse.jetty.client.Request newProxyToServerRequest(Request request, HttpURI target) {
        Upstream upstream = upstream(request);
        org.eclipse.jetty.client.Request out = super.newProxyToServerRequest(request, target)
                .tag(upstream.tag())
                .idleTimeout(settings.idleTimeout().toMillis(), TimeUnit.MILLISECONDS);
        upstream.unixSocket().ifPresent(socket -> out.transport(new Transport.TCPUnix(socket)));
        if (request.getAttribute(EXCHANGE_ATTRIBUTE) instanceof OpenStreams.Exchange exchange) {
            exchange.upstream(out);
        }
        return out;
    }

    /**
     * The client's body as Jetty streams it, except that a refused connection (nothing of the body was read yet) does
     * not fail it: the request may still be sent to the sandbox's new endpoint ({@link Reroute}).
     */
    @Override
    protected org.eclipse.jetty.client.Request.Content newProxyToServerRequestContent(
            Request request, Response response, org.eclipse.jetty.client.Request out) {
        return new ProxyRequestContent(request) {
            @Override
            public void fail(Throwable failure) {
                if (!refused(failure)) {
                    super.fail(failure);
                }
            }
        };
    }

    private static boolean refused(Throwable failure) {
        return failure instanceof ConnectException || failure instanceof NoRouteToHostException;
    }

    @Override
    protected void copyRequestHeaders(Request request, org.eclipse.jetty.client.Request out) {
        super.copyRequestHeaders(request, out);
        Upstream upstream = upstream(request);
        out.headers(headers -> {
            STRIPPED.forEach(headers::remove);
            upstream.hostHeader().ifPresent(host -> headers.put(HttpHeader.HOST, host));
            if (!upstream.forwardAccessToken()) {
                headers.remove(SandboxTargets.ACCESS_TOKEN_HEADER);
            }
            List<String> keys = request.getHeaders().getValuesList("X-API-Key");
            if (keys.stream().anyMatch(apiKey::matches)) {
                headers.remove("X-API-Key"); // the platform's key never reaches a sandbox; other values are app data
            }
        });
    }

    @Override
    protected void addProxyHeaders(Request request, org.eclipse.jetty.client.Request out) {
        String host = request.getHeaders().get(HttpHeader.HOST);
        String scheme = request.isSecure() ? "https" : "http";
        HttpURI uri = request.getHttpURI();
        String original = uri.getPathQuery() == null ? "/" : uri.getPathQuery();
        String client = Request.getRemoteAddr(request);
        out.headers(headers -> {
            String previous = headers.get(HttpHeader.X_FORWARDED_FOR);
            headers.put(HttpHeader.X_FORWARDED_FOR, previous == null ? client : previous + ", " + client);
            if (host != null) {
                headers.put(HttpHeader.X_FORWARDED_HOST, host);
            }
            headers.put(HttpHeader.X_FORWARDED_PROTO, scheme);
            headers.put("X-Forwarded-Method", request.getMethod());
            headers.put("X-Forwarded-Uri", original);
        });
    }

    @Override
    protected void sendProxyToServerRequest(
            Request request, org.eclipse.jetty.client.Request out, Response response, Callback callback) {
        long limit = settings.headersTimeout().toMillis();
        Scheduler.Task timeout = getHttpClient()
                .getScheduler()
                .schedule(
                        () -> out.abort(new TimeoutException("no response headers within " + limit + " ms")),
                        limit,
                        TimeUnit.MILLISECONDS);
        out.onResponseBegin(r -> timeout.cancel());
        out.onComplete(r -> timeout.cancel());
        super.sendProxyToServerRequest(request, out, response, callback);
    }

    @Override
    protected org.eclipse.jetty.client.Response.CompleteListener newServerToProxyResponseListener(
            Request request, org.eclipse.jetty.client.Request out, Response response, Callback callback) {
        return new CoalescingResponse(request, out, response, callback);
    }

    @Override
    protected void onServerToProxyResponseFailure(
            Request request,
            org.eclipse.jetty.client.Request out,
            org.eclipse.jetty.client.Response upstreamResponse,
            Response response,
            Callback callback,
            Throwable failure) {
        if (response.isCommitted()) {
            super.onServerToProxyResponseFailure(request, out, upstreamResponse, response, callback, failure);
            return;
        }
        Upstream upstream = upstream(request);
        if (refused(failure) && request.getAttribute(REROUTED_ATTRIBUTE) == null) {
            // refused before anything was sent (the request body is still unread): the endpoint may be stale, so
            // the route is resolved once more and, if the sandbox is reached elsewhere now, the request goes there.
            // Resolving may wait (a sandbox paused meanwhile is auto-resumed, a transition waited out): not here, on
            // the client's thread, which can be its selector (every upstream connection would wait with it).
            Thread.ofVirtual()
                    .name("aenv-proxy-reroute")
                    .start(() -> reroute(request, response, callback, upstream, failure));
            return;
        }
        reply(response, callback, upstream, failure);
    }

    private void reroute(Request request, Response response, Callback callback, Upstream upstream, Throwable failure) {
        Optional<Upstream> moved;
        try {
            moved = reroute.after(request, upstream);
        } catch (RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", upstream.sandbox().value())
                    .setCause(e)
                    .log("proxy: looking the refused endpoint's sandbox up again failed");
            moved = Optional.empty();
        }
        if (moved.isEmpty()) {
            reply(response, callback, upstream, failure);
            return;
        }
        log.atDebug()
                .addKeyValue("sandbox_id", upstream.sandbox().value())
                .addKeyValue("port", upstream.sandboxPort())
                .log("proxy: endpoint refused, sending to the new one");
        request.setAttribute(REROUTED_ATTRIBUTE, true);
        request.setAttribute(UPSTREAM_ATTRIBUTE, moved.get());
        handle(request, response, callback);
    }

    /** Answers a request whose upstream failed before its response started. */
    private static void reply(Response response, Callback callback, Upstream upstream, Throwable failure) {
        ProxyProblem problem = switch (failure) {
            case OpenStreams.SandboxGone gone ->
                ProxyProblem.sandboxNotFound(gone.sandbox().value());
            case TimeoutException timeout ->
                ProxyProblem.of(
                        504,
                        "sandbox " + upstream.sandbox().value() + " port " + upstream.sandboxPort()
                                + " did not answer in time");
            default ->
                ProxyProblem.of(
                        502,
                        "sandbox " + upstream.sandbox().value() + " port " + upstream.sandboxPort()
                                + " is not reachable");
        };
        log.atDebug()
                .addKeyValue("sandbox_id", upstream.sandbox().value())
                .addKeyValue("port", upstream.sandboxPort())
                .addKeyValue("status", problem.status())
                .addKeyValue("cause", failure.toString())
                .log("proxy: upstream failed before the response");
        ProblemReply.write(response, callback, problem);
    }

    private static Upstream upstream(Request request) {
        return (Upstream) requireNonNull(request.getAttribute(UPSTREAM_ATTRIBUTE), "no upstream resolved");
    }

    /**
     * Jetty's listener writes each chunk the upstream's parser yields as a write of its own (an HTTP chunk, a TCP
     * segment and a read for the client each) and the end of the body as one more: envd's answer to a short command
     * (start event, end event, end of stream, then the body's end, all in one read from its socket) reached the SDK as
     * four segments. This one reads what the upstream already delivered until nothing more is buffered and writes it
     * as one; the body's last bytes go out with its end (a body that arrived whole in one read then leaves as one
     * write with a Content-Length; Jetty still writes a chunked body's terminating chunk as a write of its own).
     * Nothing waits for more bytes: a chunk that arrives alone is written at once, as before, so streams are not
     * delayed. Once {@link #MAX_BATCH} bytes are gathered they are written before more is read (the upstream is read
     * further only once that write completed: back-pressure as before); so only small chunks are ever copied into one
     * buffer, and a bulk body's large chunks are written as they are, without a copy, as before.
     *
     * <p>Reads, demand callbacks and {@link #onSuccess} are serialized by the client's receiver (the response succeeds
     * only after the last chunk was read, and is notified after the reading callback returned); a write's callback
     * only releases what it wrote and demands more. So the fields need no lock.
     */
    private final class CoalescingResponse extends ProxyResponseListener {
        static final int MAX_BATCH = 8 * 1024;
        private final Response response;
        private Content.Chunk single; // the batch when it is one chunk (written without a copy), retained
        private ByteBuffer copied; // the batch when it is more than one chunk (flush mode while written)

        CoalescingResponse(
                Request request, org.eclipse.jetty.client.Request out, Response response, Callback callback) {
            super(request, out, response, callback);
            this.response = response;
        }

        @Override
        public void onContentSource(org.eclipse.jetty.client.Response upstream, Content.Source source) {
            while (true) {
                Content.Chunk chunk = source.read();
                if (chunk == null) {
                    if (batched() == 0) {
                        source.demand(() -> onContentSource(upstream, source));
                    } else {
                        write(false, () -> source.demand(() -> onContentSource(upstream, source)), upstream::abort);
                    }
                    return;
                }
                if (Content.Chunk.isFailure(chunk)) {
                    release();
                    upstream.abort(chunk.getFailure());
                    if (!chunk.isLast()) {
                        source.fail(chunk.getFailure());
                    }
                    return;
                }
                add(chunk);
                chunk.release();
                if (chunk.isLast()) {
                    return; // onSuccess writes the batch with the body's end
                }
                if (batched() >= MAX_BATCH) {
                    write(false, () -> source.demand(() -> onContentSource(upstream, source)), upstream::abort);
                    return;
                }
            }
        }

        @Override
        public void onSuccess(org.eclipse.jetty.client.Response upstream) {
            write(true, () -> succeeded(), this::failed); // as Jetty's: completing this completes the exchange
        }

        @Override
        public void onFailure(org.eclipse.jetty.client.Response upstream, Throwable failure) {
            release(); // what was read and not written (a write in flight releases its own)
        }

        private int batched() {
            return single != null ? single.remaining() : copied != null ? copied.position() : 0;
        }

        private void add(Content.Chunk chunk) {
            if (!chunk.hasRemaining()) {
                return;
            }
            if (single == null && copied == null) {
                chunk.retain();
                single = chunk;
                return;
            }
            ByteBuffer more = chunk.getByteBuffer();
            if (copied == null) {
                copied = ByteBuffer.allocate(Math.max(4096, single.remaining() + more.remaining()));
                copied.put(single.getByteBuffer());
                single.release();
                single = null;
            } else if (copied.remaining() < more.remaining()) {
                ByteBuffer larger =
                        ByteBuffer.allocate(Math.max(copied.capacity() * 2, copied.position() + more.remaining()));
                copied.flip();
                larger.put(copied);
                copied = larger;
            }
            copied.put(more);
        }

        /** Writes the batch ({@code last}: with the body's end) and forgets it; the callbacks run once it is written. */
        private void write(boolean last, Runnable written, java.util.function.Consumer<Throwable> failed) {
            Content.Chunk held = single;
            ByteBuffer bytes =
                    held != null ? held.getByteBuffer() : copied != null ? copied.flip() : BufferUtil.EMPTY_BUFFER;
            single = null;
            copied = null;
            response.write(last, bytes, new Callback() {
                @Override
                public void succeeded() {
                    if (held != null) {
                        held.release();
                    }
                    written.run();
                }

                @Override
                public void failed(Throwable failure) {
                    if (held != null) {
                        held.release();
                    }
                    failed.accept(failure);
                }

                @Override
                public InvocationType getInvocationType() {
                    return last ? CoalescingResponse.this.getInvocationType() : Invocable.InvocationType.NON_BLOCKING;
                }
            });
        }

        private void release() {
            if (single != null) {
                single.release();
                single = null;
            }
            copied = null;
        }
    }
}
