package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

/** {@code lifecycle} in {@link SandboxDetail}: what happens on timeout, and whether traffic resumes a paused sandbox. */
public record SandboxLifecycle(boolean autoResume, OnTimeout onTimeout) {
    public SandboxLifecycle {
        requireNonNull(onTimeout, "onTimeout is null");
    }
}
