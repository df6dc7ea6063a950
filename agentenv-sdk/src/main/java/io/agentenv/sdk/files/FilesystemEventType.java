package io.agentenv.sdk.files;

/** What happened to an entry in a watched directory. */
public enum FilesystemEventType {
    /** It was created. */
    CREATE,
    /** It was written. */
    WRITE,
    /** It was removed. */
    REMOVE,
    /** It was renamed. */
    RENAME,
    /** Its permissions changed. */
    CHMOD
}
