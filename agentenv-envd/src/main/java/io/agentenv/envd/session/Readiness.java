package io.agentenv.envd.session;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.http.Access;
import io.agentenv.envd.http.EnvdHandler;
import io.agentenv.envd.http.HttpException;
import io.agentenv.envd.http.HttpRoutes;
import io.agentenv.envd.http.Responses;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code GET /ready}, for the host only (E2B's envd has no such route): 204 once envd's one-time set-up that runs
 * after it started listening has finished, waiting for it up to {@code wait} per request; 503 if it has not by then.
 * {@code /health} answers as soon as envd listens (a request arriving before the set-up finished just waits for what it
 * needs); the host waits for {@code /ready} before it checkpoints an envd, so that restored copies never redo the set-up.
 * Once the set-up has finished it needs the access token like every route but {@code /health}, once {@code POST /init}
 * has set one: the host asks before the token is set (a template's envd) or with it (an envd restarted inside a
 * sandbox, which the host then initialises again); no one else needs it. While the set-up runs it answers 503 whatever
 * the token: envd's request warm-up ({@code RequestPathWarmup}) claims connections as the host does, token included,
 * and restores the token-less session only at its end, so a token check then would answer the host's poll with 401.
 */
public final class Readiness {
    private final CompletableFuture<Void> done;
    private final Session session;
    private final Duration wait;

    /**
     * @param setUps the background set-ups; one that fails counts as finished (its users fall back or report it)
     * @param session whose access token {@code /ready} checks once they have finished
     */
    public Readiness(List<CompletableFuture<?>> setUps, Session session, Duration wait) {
        requireNonNull(setUps, "setUps is null");
        this.session = requireNonNull(session, "session is null");
        this.wait = requireNonNull(wait, "wait is null");
        this.done = CompletableFuture.allOf(
                setUps.stream().map(f -> f.handle((value, failure) -> null)).toArray(CompletableFuture[]::new));
    }

    public boolean isReady() {
        return done.isDone();
    }

    public void register(HttpRoutes routes) {
        routes.add("GET", "/ready", Access.SELF_CHECKED, (request, response) -> {
            try {
                done.get(wait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new HttpException(503, "envd is still setting up");
            } catch (ExecutionException e) {
                throw new IllegalStateException("unreachable: set-up failures are mapped to completion", e);
            }
            if (!session.isAuthorized(request.header(EnvdHandler.ACCESS_TOKEN_HEADER))) {
                throw HttpException.unauthorized("unauthorized access, please provide a valid access token");
            }
            Responses.noContent(response);
        });
    }
}
