package io.agentenv.envd.metrics;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.http.Access;
import io.agentenv.envd.http.EnvdRequest;
import io.agentenv.envd.http.EnvdResponse;
import io.agentenv.envd.http.HttpEndpoint;
import io.agentenv.envd.http.HttpRoutes;
import io.agentenv.envd.http.Responses;
import io.agentenv.envd.http.RestJson;
import java.io.IOException;

/** {@code GET /metrics}: one reading of the sandbox's CPU, memory and disk (needs the access token once set). */
public final class MetricsEndpoint implements HttpEndpoint {
    private final SandboxMetrics metrics;

    public MetricsEndpoint(SandboxMetrics metrics) {
        this.metrics = requireNonNull(metrics, "metrics is null");
    }

    public void register(HttpRoutes routes) {
        routes.add("GET", "/metrics", Access.TOKEN, this);
    }

    @Override
    public void handle(EnvdRequest request, EnvdResponse response) throws IOException {
        Responses.json(response, 200, RestJson.metrics(metrics.sample().toWire()));
    }
}
