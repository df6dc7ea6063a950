package io.agentenv.sdk.files;

/** What a filesystem entry is. */
public enum FileType {
    /** A regular file. */
    FILE,
    /** A directory. */
    DIR,
    /** A symbolic link. */
    SYMLINK
}
