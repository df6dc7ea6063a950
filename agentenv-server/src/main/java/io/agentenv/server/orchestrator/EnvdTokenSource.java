package io.agentenv.server.orchestrator;

import io.agentenv.spi.EnvdTokens;

/**
 * Derives the envd access token of a sandbox (the API's credentials package implements it; tokens are not stored). The
 * backend gets the same derivation ({@link io.agentenv.spi.BackendContext#envdTokens()}).
 */
@FunctionalInterface
public interface EnvdTokenSource extends EnvdTokens {
}
