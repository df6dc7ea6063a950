package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The proxied exchanges in flight, per sandbox, so that killing or pausing a sandbox can cut them: the upstream request
 * is aborted and, once the client has seen response headers, the client's connection is aborted too (no terminating
 * chunk), which the E2B SDK reads as "terminated" and then, with /health answering 502, as "the sandbox was killed".
 */
final class OpenStreams {
    private final Map<SandboxId, Set<Cuttable>> open = new ConcurrentHashMap<>();

    /** Something open towards a sandbox that can be cut: a proxied exchange or a bridged WebSocket. */
    interface Cuttable {
        void cut(String reason);
    }

    /** One proxied exchange: the Jetty callback of the client's request, completed exactly once. */
    final class Exchange implements Callback, Cuttable {
        private final SandboxId sandbox;
        private final Response response;
        private final Callback delegate;
        private final AtomicBoolean completed = new AtomicBoolean();
        private volatile org.eclipse.jetty.client.Request upstream;
        private volatile SandboxGone cutBy;

        private Exchange(SandboxId sandbox, Response response, Callback delegate) {
            this.sandbox = sandbox;
            this.response = response;
            this.delegate = delegate;
        }

        void upstream(org.eclipse.jetty.client.Request request) {
            this.upstream = request;
            SandboxGone gone = cutBy;
            if (gone != null) {
                request.abort(gone); // cut while the request was being prepared: answered as "not found"
            }
        }

        @Override
        public void succeeded() {
            if (completed.compareAndSet(false, true)) {
                remove(this);
                delegate.succeeded();
            }
        }

        @Override
        public void failed(Throwable x) {
            if (completed.compareAndSet(false, true)) {
                remove(this);
                delegate.failed(x);
            }
        }

        @Override
        public InvocationType getInvocationType() {
            return delegate.getInvocationType();
        }

        /**
         * Aborts upstream (now, or as soon as the upstream request exists); a response already started is failed so
         * that Jetty drops the client connection.
         */
        @Override
        public void cut(String reason) {
            SandboxGone gone = new SandboxGone(sandbox, reason);
            cutBy = gone;
            org.eclipse.jetty.client.Request request = upstream;
            if (request != null) {
                request.abort(gone); // before the response started: the forwarder answers 502 "not found"
            }
            if (response.isCommitted()) {
                failed(gone);
            }
        }
    }

    /** Why an exchange was cut; {@link EofException} so Jetty treats it as a dropped connection, not a server bug. */
    static final class SandboxGone extends EofException {
        private final SandboxId sandbox;

        SandboxGone(SandboxId sandbox, String reason) {
            super("sandbox " + sandbox.value() + " " + reason);
            this.sandbox = sandbox;
        }

        SandboxId sandbox() {
            return sandbox;
        }
    }

    Exchange open(SandboxId sandbox, Response response, Callback callback) {
        requireNonNull(sandbox, "sandbox is null");
        Exchange exchange = new Exchange(
                sandbox, requireNonNull(response, "response is null"), requireNonNull(callback, "callback is null"));
        register(sandbox, exchange);
        return exchange;
    }

    void register(SandboxId sandbox, Cuttable cuttable) {
        open.computeIfAbsent(sandbox, k -> ConcurrentHashMap.newKeySet()).add(cuttable);
    }

    void unregister(SandboxId sandbox, Cuttable cuttable) {
        open.computeIfPresent(sandbox, (k, set) -> {
            set.remove(cuttable);
            return set.isEmpty() ? null : set;
        });
    }

    /** Cuts every exchange of {@code sandbox} open now; returns how many. */
    int cut(SandboxId sandbox, String reason) {
        Set<Cuttable> exchanges = open.remove(sandbox);
        if (exchanges == null) {
            return 0;
        }
        List<Cuttable> all = List.copyOf(exchanges);
        all.forEach(e -> e.cut(reason));
        return all.size();
    }

    int count(SandboxId sandbox) {
        Set<Cuttable> exchanges = open.get(sandbox);
        return exchanges == null ? 0 : exchanges.size();
    }

    private void remove(Exchange exchange) {
        unregister(exchange.sandbox, exchange);
    }
}
