package io.agentenv.spi;

/** How much of a running sandbox a pause keeps. */
public enum PauseMode {
    /** Memory and filesystem are written to disk (checkpoint); RAM is released; processes continue on resume. */
    WITH_MEMORY,
    /** Only the filesystem is kept; resume boots afresh on it. */
    FILESYSTEM_ONLY
}
