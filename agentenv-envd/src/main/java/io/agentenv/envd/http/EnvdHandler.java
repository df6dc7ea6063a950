package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.agentenv.envd.connect.ConnectDispatch;
import io.agentenv.envd.connect.ConnectRouter;
import io.agentenv.envd.connect.Procedure;
import io.agentenv.envd.session.Session;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * envd's single HTTP handler: access check, then a Connect RPC or a plain route. Blocking, run on virtual threads.
 * This is the one place where plain-route failures become HTTP statuses.
 */
public final class EnvdHandler implements HttpHandler {
    public static final String ACCESS_TOKEN_HEADER = "X-Access-Token";
    private static final Logger log = LoggerFactory.getLogger(EnvdHandler.class);

    private final HttpRoutes routes;
    private final ConnectRouter rpcs;
    private final ConnectDispatch dispatch;
    private final Session session;

    public EnvdHandler(HttpRoutes routes, ConnectRouter rpcs, ConnectDispatch dispatch, Session session) {
        this.routes = requireNonNull(routes, "routes is null");
        this.rpcs = requireNonNull(rpcs, "rpcs is null");
        this.dispatch = requireNonNull(dispatch, "dispatch is null");
        this.session = requireNonNull(session, "session is null");
    }

    /**
     * Serves one exchange. A failure after the status line went out cannot be reported any more: it is thrown, and the
     * server then closes the connection, so the client sees a cut response rather than a complete-looking one.
     */
    @Override
    public void handle(HttpExchange exchange) throws IOException {
        EnvdRequest request = new EnvdRequest(exchange);
        EnvdResponse response = new EnvdResponse(exchange, request);
        String path = request.path();
        try {
            Optional<Procedure> procedure = rpcs.find(path);
            if (procedure.isPresent()) {
                if (!session.isAuthorized(request.header(ACCESS_TOKEN_HEADER))) {
                    dispatch.unauthenticated(response);
                } else {
                    dispatch.serve(procedure.get(), request, response);
                }
            } else {
                serveRoute(path, request, response);
            }
        } catch (Throwable failure) {
            fail(path, response, failure);
        }
        exchange.close();
    }

    private void serveRoute(String path, EnvdRequest request, EnvdResponse response) throws Exception {
        Optional<Map<String, HttpRoutes.Route>> methods = routes.forPath(path);
        if (methods.isEmpty()) {
            if (ConnectRouter.looksLikeRpc(path)) {
                dispatch.unknownProcedure(path, response);
                return;
            }
            throw HttpException.notFound("no route for " + path);
        }
        HttpRoutes.Route route = methods.get().get(request.method());
        if (route == null) {
            response.header("Allow", String.join(", ", methods.get().keySet()));
            throw new HttpException(405, "method " + request.method() + " is not allowed on " + path);
        }
        if (route.access() == Access.TOKEN && !session.isAuthorized(request.header(ACCESS_TOKEN_HEADER))) {
            throw HttpException.unauthorized("unauthorized access, please provide a valid access token");
        }
        route.endpoint().handle(request, response);
    }

    private static void fail(String path, EnvdResponse response, Throwable failure) throws IOException {
        if (response.committed()) {
            log.atDebug()
                    .addKeyValue("path", path)
                    .addKeyValue("error", failure.toString())
                    .log("response aborted");
            throw failure instanceof IOException io ? io : new IOException("response aborted", failure);
        }
        switch (failure) {
            case HttpException http -> Responses.error(response, http.status(), http.getMessage());
            default -> {
                String reference = UUID.randomUUID().toString();
                log.atError()
                        .setCause(failure)
                        .addKeyValue("path", path)
                        .addKeyValue("ref", reference)
                        .log("request failed");
                Responses.error(response, 500, "internal error (ref " + reference + ")");
            }
        }
    }
}
