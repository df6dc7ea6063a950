package io.agentenv.envd.filesystem;

/** What happened to a watched entry (E2B's {@code EventType}). */
public enum EventType {
    CREATE,
    WRITE,
    REMOVE,
    RENAME,
    CHMOD
}
