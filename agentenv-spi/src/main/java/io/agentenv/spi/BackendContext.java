package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * What the server gives a backend once, before any other call: a directory it owns for its own state and the
 * backend's settings. The server's configuration loader is the only reader of the environment and the config file;
 * a backend reads its settings from here, never from {@code System.getenv}.
 *
 * @param workDir    a directory owned by this backend (created by the server), e.g. {@code <data dir>/backend/<name>}
 * @param settings   backend-specific keys and values, e.g. {@code AENV_BACKEND_CACHE_DIR} passed as {@code cache_dir}
 * @param envdTokens the server's envd token of a sandbox id (what {@link LaunchSpec#accessToken()} will carry), for a
 *                   backend that initialises ready instances for the ids it proposes; empty when not given
 * @param sharedFiles the cluster's storage for the backend's own files that its states are made on (a node of a
 *                    cluster with shared storage); empty for a lone server
 */
public record BackendContext(
        Path workDir,
        Map<String, String> settings,
        Optional<EnvdTokens> envdTokens,
        Optional<SharedFiles> sharedFiles) {
    public BackendContext {
        requireNonNull(workDir, "workDir is null");
        settings = Map.copyOf(settings);
        requireNonNull(envdTokens, "envdTokens is null");
        requireNonNull(sharedFiles, "sharedFiles is null");
    }

    /** A lone server's: no shared storage. */
    public BackendContext(Path workDir, Map<String, String> settings, Optional<EnvdTokens> envdTokens) {
        this(workDir, settings, envdTokens, Optional.empty());
    }

    /** Without the server's token derivation (a backend then proposes no ids). */
    public BackendContext(Path workDir, Map<String, String> settings) {
        this(workDir, settings, Optional.empty());
    }

    public Optional<String> setting(String key) {
        return Optional.ofNullable(settings.get(key));
    }
}
