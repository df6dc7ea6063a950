package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The server's handler while envd's services are still being wired: envd is already listening, so a request (
 * {@code GET /health} included) is accepted at once and waits for the services, then is handled by them as usual. A
 * 204 from {@code /health} therefore means every endpoint is ready. Once the services are there this is one volatile
 * read per request. If wiring failed (envd then exits), a waiting request gets a 503 rather than hanging.
 */
public final class StartupGate extends Handler.Abstract {
    private final Future<? extends Handler> services;
    private volatile Handler ready;

    public StartupGate(Future<? extends Handler> services) {
        super(InvocationType.BLOCKING);
        this.services = requireNonNull(services, "services is null");
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        Handler handler = ready;
        if (handler == null) {
            handler = await();
            if (handler == null) {
                Responses.error(response, 503, "envd failed to start");
                callback.succeeded();
                return true;
            }
        }
        return handler.handle(request, response, callback);
    }

    private Handler await() throws InterruptedException {
        try {
            Handler handler = services.get();
            ready = handler;
            return handler;
        } catch (ExecutionException e) {
            return null;
        }
    }
}
