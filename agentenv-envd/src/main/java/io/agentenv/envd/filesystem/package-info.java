/**
 * envd's {@code filesystem.Filesystem} Connect service, wire-compatible with E2B's envd.
 *
 * <p>{@link io.agentenv.envd.filesystem.FilesystemRpc} resolves each request's paths for the calling user (Basic auth
 * user, else the sandbox's default user; relative paths and {@code ~} against that user's home, the empty path is the
 * default workdir: {@link io.agentenv.envd.users.UserPaths})
 * and maps {@link io.agentenv.envd.filesystem.FsException} to Connect codes in one place. The operations
 * ({@link io.agentenv.envd.filesystem.LocalFilesystem}) work on absolute paths; directories they create belong to
 * the user. {@link io.agentenv.envd.filesystem.Entry} follows E2B's field rules: permission bits only in
 * {@code mode}, Go's {@code FileMode.String()} in {@code permissions}, owner and group names, a symlink's final
 * target in {@code symlinkTarget} and its target's type, metadata from the {@code user.e2b.*} extended attributes
 * (the namespace E2B's envd writes and reads, so that other tools' {@code user.*} attributes do not show up).
 *
 * <p>Watching ({@link io.agentenv.envd.filesystem.DirectoryWatch}, {@link io.agentenv.envd.filesystem.Watchers}) is
 * built on the JDK WatchService shared through one {@link io.agentenv.envd.filesystem.WatchHub}; how its folded
 * event kinds are turned back into fsnotify's CREATE, WRITE, REMOVE, RENAME and CHMOD is described on
 * {@link io.agentenv.envd.filesystem.DirectoryWatch}.
 *
 * <p>Deliberate differences from E2B's envd: removing {@code /} is refused; {@code Stat} below a regular file is
 * {@code not_found} (E2B answers {@code internal}); polling watchers are bounded (E2B's buffer without limit).
 */
package io.agentenv.envd.filesystem;
