package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.EnvdTokens;
import io.agentenv.spi.LaunchSpec;

/**
 * The backend's {@link LaunchSpec} for a record: its id, template, environment and network, the default user and
 * working directory (its template's, else the server's user in that user's home) and the envd token derived for the
 * id (never stored). Create, fork children, resume and recovery launch from it.
 */
final class LaunchSpecs {
    private final EnvdTokens tokens;
    private final String defaultUser;

    LaunchSpecs(EnvdTokens tokens, String defaultUser) {
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.defaultUser = requireNonNull(defaultUser, "defaultUser is null");
    }

    LaunchSpec of(SandboxRecord record) {
        return new LaunchSpec(
                record.id(),
                record.template(),
                record.envVars(),
                record.guestDefaults().user().orElse(defaultUser),
                tokens.envdToken(record.id()),
                record.network(),
                record.guestDefaults().workdir());
    }
}
