package io.agentenv.orchestrator;

import java.util.Optional;

/** Why a build stops early: the step (when one failed) and the reason, for the build's status. */
final class BuildFailed extends Exception {
    private static final long serialVersionUID = 1L;

    @SuppressWarnings("serial") // never serialized
    private final Optional<String> step;

    BuildFailed(Optional<String> step, String reason) {
        super(reason, null, false, false);
        this.step = step;
    }

    /** The step that failed; empty when the build failed outside one. */
    Optional<String> step() {
        return step;
    }
}
