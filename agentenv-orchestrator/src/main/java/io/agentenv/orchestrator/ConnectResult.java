package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

/** The sandbox after connect, and whether connect had to resume it (E2B: 201) or it was running (200). */
public record ConnectResult(SandboxView view, Outcome outcome) {
    public ConnectResult {
        requireNonNull(view, "view is null");
        requireNonNull(outcome, "outcome is null");
    }

    public enum Outcome {
        ALREADY_RUNNING,
        RESUMED
    }
}
