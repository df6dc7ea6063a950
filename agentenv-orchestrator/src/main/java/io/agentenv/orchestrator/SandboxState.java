package io.agentenv.orchestrator;

import java.util.EnumSet;
import java.util.Set;

/**
 * Lifecycle states. RUNNING and PAUSED are stable; every other state is held by exactly one in-flight operation (the
 * compare-and-set that entered it is the per-sandbox lock). The E2B projection ("running"/"paused") is the API's job.
 */
public enum SandboxState {
    CREATING,
    RESUMING,
    RUNNING,
    SNAPSHOTTING,
    FORKING,
    PAUSING,
    PAUSED,
    KILLING;

    boolean isStable() {
        return this == RUNNING || this == PAUSED;
    }

    public boolean isTransitional() {
        return !isStable();
    }

    /** States a client can see: everything but KILLING (a sandbox being killed counts as gone). */
    public static Set<SandboxState> visible() {
        return EnumSet.complementOf(EnumSet.of(KILLING));
    }
}
