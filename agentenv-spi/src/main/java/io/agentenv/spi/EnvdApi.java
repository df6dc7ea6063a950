package io.agentenv.spi;

import java.io.InputStream;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The server's calls into the guest agent (envd) of one running sandbox instance: one seam for every guest-facing
 * feature. A new guest call adds a method here, its implementation in the HTTP client and the fake, and its caller;
 * lifecycle operations (pause, snapshot, ...) stay on {@link SandboxBackend}.
 *
 * <p>A handle belongs to one runtime generation of one sandbox (one {@link SandboxBackend} instance): it never talks
 * to another generation, and it stops working once that instance is closed. Methods block on I/O for at most the
 * implementation's per-call timeout and are safe to call concurrently. Callers must not hold any lock while calling.
 */
public interface EnvdApi {
    /** {@code GET /health}: returns when envd answers 204. */
    void health() throws EnvdException;

    /**
     * {@code POST /init}: sets the access token, env vars, default user and workdir, and syncs the guest clock. Sent
     * on every launch (create, resume, fork child) once {@link #health()} succeeds. After a successful call that sets a
     * token, this handle authenticates with it.
     */
    void init(EnvdInit init) throws EnvdException;

    /** {@code GET /metrics}: one live reading of the sandbox's CPU, memory and disk. */
    EnvdMetrics metrics() throws EnvdException;

    /**
     * {@code GET /logs}: envd's own log lines and the processes' events and output, oldest first, from {@code cursor}
     * (a sequence number; 0 = the oldest kept) at most {@code limit} (1..1000) entries.
     */
    EnvdLogPage logs(long cursor, int limit) throws EnvdException;

    /** {@code process.Process/List}: the processes envd started that are still running. */
    List<GuestProcess> processes() throws EnvdException;

    /**
     * {@code process.Process/Start}: runs {@code command} to its end, giving {@code output} its stdout and stderr as
     * they arrive; returns how it ended. A command envd refuses to start (no such user, no such program) is an
     * {@link EnvdException.Rejected}; a stream that breaks off (the sandbox stopped) an
     * {@link EnvdException.Unreachable}.
     */
    GuestCommand.Exit run(GuestCommand command, GuestCommand.Output output) throws EnvdException;

    /**
     * {@code POST /files?path=}: writes the {@code length} bytes {@code content} opens (called once per attempt) to
     * {@code path} as {@code user} (envd's default user when empty), creating missing parents for that user, and
     * replacing a file that is there; returns the path envd wrote.
     */
    String upload(String path, Optional<String> user, long length, Supplier<InputStream> content) throws EnvdException;
}
