package io.agentenv.backend.mock;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.Resources;

import java.nio.charset.StandardCharsets;

import static java.util.Objects.requireNonNull;

/** Encoded as {@code paused|<mode>|<cpu>|<memory>|<disk>|<sandbox id>}. */
record MockPausedState(PauseMode mode, Resources resources, String sandboxId) implements PausedState {
    MockPausedState {
        requireNonNull(mode, "mode is null");
        requireNonNull(resources, "resources is null");
        requireNonNull(sandboxId, "sandboxId is null");
    }

    @Override
    public byte[] encode() {
        return MockSandbox.utf8(String.join("|", "paused", mode.name(), Integer.toString(resources.cpuCount()),
                Integer.toString(resources.memoryMiB()), Integer.toString(resources.diskSizeMiB()), sandboxId));
    }

    static MockPausedState decode(byte[] encoded) throws BackendException {
        String[] parts = new String(encoded, StandardCharsets.UTF_8).split("\\|", -1);
        try {
            if (parts.length != 6 || !parts[0].equals("paused")) {
                throw new IllegalArgumentException("not a mock paused state");
            }
            return new MockPausedState(PauseMode.valueOf(parts[1]), new Resources(Integer.parseInt(parts[2]),
                    Integer.parseInt(parts[3]), Integer.parseInt(parts[4])), parts[5]);
        } catch (IllegalArgumentException e) {
            throw new BackendException.Terminal("cannot decode mock paused state", e);
        }
    }
}
