package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Tunables of the orchestrator.
 *
 * @param artifactRoot     where paused and snapshot artifacts live ({@code <root>/<sandbox or snapshot id>/<generation>})
 * @param readyTimeout     how long a start or restore may take until the guest agent answers
 * @param transitionWait   how long an operation waits for another one's transition to finish (60 s)
 * @param evictionInterval how often expired sandboxes are looked for (1 s)
 * @param forkParallelism  how many fork children are restored at once
 * @param defaultUser      the user processes run as unless a request says otherwise
 */
public record OrchestratorSettings(
        Path artifactRoot,
        Duration readyTimeout,
        Duration transitionWait,
        Duration evictionInterval,
        int forkParallelism,
        String defaultUser) {
    public OrchestratorSettings {
        requireNonNull(artifactRoot, "artifactRoot is null");
        positive(readyTimeout, "readyTimeout");
        positive(transitionWait, "transitionWait");
        positive(evictionInterval, "evictionInterval");
        if (forkParallelism < 1) {
            throw new IllegalArgumentException("forkParallelism must be >= 1: " + forkParallelism);
        }
        requireNonNull(defaultUser, "defaultUser is null");
    }

    /** The user processes run as by default: E2B's templates' {@code user}. */
    public static final String DEFAULT_USER = "user";

    /** Production defaults under {@code artifactRoot}. */
    public static OrchestratorSettings defaults(Path artifactRoot) {
        return new OrchestratorSettings(
                artifactRoot, Duration.ofSeconds(60), Duration.ofSeconds(60), Duration.ofSeconds(1), 4, DEFAULT_USER);
    }

    private static void positive(Duration value, String name) {
        requireNonNull(value, name + " is null");
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive: " + value);
        }
    }
}
