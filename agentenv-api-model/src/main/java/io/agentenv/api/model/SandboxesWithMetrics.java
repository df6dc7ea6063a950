package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import java.util.Map;

/** {@code GET /sandboxes/metrics?sandbox_ids=...}: the newest metric of each sandbox that has one, by sandbox id. */
public record SandboxesWithMetrics(Map<String, SandboxMetric> sandboxes) {
    public SandboxesWithMetrics {
        sandboxes = Map.copyOf(requireNonNull(sandboxes, "sandboxes is null"));
    }
}
