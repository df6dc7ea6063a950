package io.agentenv.envd.filesystem;

/** The kind of a filesystem entry as envd reports it. Symlinks report the type of their final target. */
public enum FileType {
    /** A dangling or cyclic symlink, or a device, socket or pipe: the SDK drops such entries. */
    UNSPECIFIED,
    FILE,
    DIRECTORY,
    SYMLINK
}
