package io.agentenv.sdk;

import java.util.Locale;

/** Whether a sandbox runs or is paused (a killed sandbox is not found at all). */
public enum SandboxState {
    /** It runs. */
    RUNNING,
    /** It is paused; {@link Sandbox#connect} resumes it. */
    PAUSED;

    /** The wire name ({@code running}, {@code paused}). */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    static SandboxState ofWire(String value) {
        return "paused".equalsIgnoreCase(value) ? PAUSED : RUNNING;
    }
}
