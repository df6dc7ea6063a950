package io.agentenv.sdk;

/** What happens to a sandbox when its timeout passes. */
public enum OnTimeout {
    /** It is killed (the default). */
    KILL,
    /** It is paused; {@link Sandbox#connect} resumes it. */
    PAUSE
}
