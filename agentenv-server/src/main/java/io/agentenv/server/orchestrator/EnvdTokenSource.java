package io.agentenv.server.orchestrator;

import io.agentenv.spi.AccessToken;
import io.agentenv.spi.SandboxId;

/** Derives the envd access token of a sandbox (the API's credentials package implements it; tokens are not stored). */
@FunctionalInterface
public interface EnvdTokenSource {
    AccessToken envdToken(SandboxId id);
}
