package io.agentenv.backend.mock;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SnapshotState;
import java.nio.charset.StandardCharsets;

/** Encoded as {@code snapshot|<cpu>|<memory>|<disk>|<source sandbox id>}. */
record MockSnapshotState(Resources resources, String sourceSandboxId) implements SnapshotState {
    MockSnapshotState {
        requireNonNull(resources, "resources is null");
        requireNonNull(sourceSandboxId, "sourceSandboxId is null");
    }

    @Override
    public byte[] encode() {
        return MockSandbox.utf8(String.join(
                "|",
                "snapshot",
                Integer.toString(resources.cpuCount()),
                Integer.toString(resources.memoryMiB()),
                Integer.toString(resources.diskSizeMiB()),
                sourceSandboxId));
    }

    static MockSnapshotState decode(byte[] encoded) throws BackendException {
        String[] parts = new String(encoded, StandardCharsets.UTF_8).split("\\|", -1);
        try {
            if (parts.length != 5 || !parts[0].equals("snapshot")) {
                throw new IllegalArgumentException("not a mock snapshot state");
            }
            return new MockSnapshotState(
                    new Resources(Integer.parseInt(parts[1]), Integer.parseInt(parts[2]), Integer.parseInt(parts[3])),
                    parts[4]);
        } catch (IllegalArgumentException e) {
            throw new BackendException.Terminal("cannot decode mock snapshot state", e);
        }
    }
}
