package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.Arrays;

/** A backend's encoded paused or snapshot state and the directory holding its artifacts. */
public record StoredState(byte[] encoded, Path artifactDir) {
    public StoredState {
        encoded = encoded.clone();
        requireNonNull(artifactDir, "artifactDir is null");
    }

    @Override
    public byte[] encoded() {
        return encoded.clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof StoredState that
                && Arrays.equals(encoded, that.encoded)
                && artifactDir.equals(that.artifactDir);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(encoded) + artifactDir.hashCode();
    }

    @Override
    public String toString() {
        return "StoredState[" + encoded.length + " bytes, " + artifactDir + "]";
    }
}
