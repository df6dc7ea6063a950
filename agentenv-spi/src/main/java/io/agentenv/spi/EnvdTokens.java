package io.agentenv.spi;

/**
 * The server's derivation of a sandbox's envd access token from its id: the token a {@link LaunchSpec} of that id
 * carries. Given to a backend through {@link BackendContext#envdTokens()}, so it can initialise a ready instance for
 * the id it {@link SandboxBackendFactory#reserve proposes} before anyone claims it. Thread-safe; a token is never logged.
 */
@FunctionalInterface
public interface EnvdTokens {
    AccessToken envdToken(SandboxId id);
}
