package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.connect.ConnectDispatch;
import io.agentenv.envd.connect.ConnectRouter;
import io.agentenv.envd.connect.Procedure;
import io.agentenv.envd.session.Session;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * envd's single Jetty handler: access check, then a Connect RPC or a plain route. Blocking, run on virtual threads.
 * This is the one place where plain-route failures become HTTP statuses.
 */
public final class EnvdHandler extends Handler.Abstract {
    public static final String ACCESS_TOKEN_HEADER = "X-Access-Token";
    private static final Logger log = LoggerFactory.getLogger(EnvdHandler.class);

    private final HttpRoutes routes;
    private final ConnectRouter rpcs;
    private final ConnectDispatch dispatch;
    private final Session session;

    public EnvdHandler(HttpRoutes routes, ConnectRouter rpcs, ConnectDispatch dispatch, Session session) {
        super(InvocationType.BLOCKING);
        this.routes = requireNonNull(routes, "routes is null");
        this.rpcs = requireNonNull(rpcs, "rpcs is null");
        this.dispatch = requireNonNull(dispatch, "dispatch is null");
        this.session = requireNonNull(session, "session is null");
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = request.getHttpURI().getPath();
        try {
            Optional<Procedure> procedure = rpcs.find(path);
            if (procedure.isPresent()) {
                if (!session.isAuthorized(request.getHeaders().get(ACCESS_TOKEN_HEADER))) {
                    dispatch.unauthenticated(response);
                } else {
                    dispatch.serve(procedure.get(), request, response);
                }
            } else {
                serveRoute(path, request, response);
            }
            callback.succeeded();
        } catch (Throwable failure) {
            fail(path, response, callback, failure);
        }
        return true;
    }

    private void serveRoute(String path, Request request, Response response) throws Exception {
        Optional<Map<String, HttpRoutes.Route>> methods = routes.forPath(path);
        if (methods.isEmpty()) {
            if (ConnectRouter.looksLikeRpc(path)) {
                dispatch.unknownProcedure(path, response);
                return;
            }
            throw HttpException.notFound("no route for " + path);
        }
        HttpRoutes.Route route = methods.get().get(request.getMethod());
        if (route == null) {
            response.getHeaders().put(HttpHeader.ALLOW, String.join(", ", methods.get().keySet()));
            throw new HttpException(405, "method " + request.getMethod() + " is not allowed on " + path);
        }
        if (route.access() == Access.TOKEN && !session.isAuthorized(request.getHeaders().get(ACCESS_TOKEN_HEADER))) {
            throw HttpException.unauthorized("unauthorized access, please provide a valid access token");
        }
        route.endpoint().handle(request, response);
    }

    private static void fail(String path, Response response, Callback callback, Throwable failure) {
        if (response.isCommitted()) {
            log.atDebug().addKeyValue("path", path).addKeyValue("error", failure.toString()).log("response aborted");
            callback.failed(failure);
            return;
        }
        try {
            switch (failure) {
                case HttpException http -> Responses.error(response, http.status(), http.getMessage());
                default -> {
                    String reference = UUID.randomUUID().toString();
                    log.atError().setCause(failure).addKeyValue("path", path).addKeyValue("ref", reference)
                            .log("request failed");
                    Responses.error(response, 500, "internal error (ref " + reference + ")");
                }
            }
            callback.succeeded();
        } catch (Throwable writeFailure) {
            callback.failed(writeFailure);
        }
    }
}
