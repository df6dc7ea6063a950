package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.SandboxId;

/**
 * The guest agent of a sandbox that was RUNNING when it was looked up, with the runtime generation it belongs to. Taken
 * under the runtime lock and used after it is released: the guest I/O holds no orchestrator lock, so it may race a
 * pause or kill, after which calls fail (the handle belongs to a stopped generation).
 */
record RunningEnvd(SandboxId id, long generation, EnvdApi envd) {
    RunningEnvd {
        requireNonNull(id, "id is null");
        requireNonNull(envd, "envd is null");
    }
}
