package io.agentenv.backend.mock;

/** The backend calls a test can script, count and hold. */
public enum MockOp {
    PREPARE,
    START,
    PAUSE,
    FREEZE,
    THAW,
    SNAPSHOT,
    UPDATE_NETWORK,
    CLOSE,
    DECODE_PAUSED,
    DECODE_SNAPSHOT,
    REATTACH,
    LIVENESS,
    REAP,
    DISCARD_PAUSED
}
