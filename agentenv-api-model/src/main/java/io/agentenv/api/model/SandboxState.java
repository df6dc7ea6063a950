package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;
import java.util.Optional;

/** E2B's two sandbox states on the wire; the server's internal states are projected onto these. */
public enum SandboxState {
    RUNNING("running"),
    PAUSED("paused");

    private final String wire;

    SandboxState(String wire) {
        this.wire = wire;
    }

    @JsonValue
    public String wire() {
        return wire;
    }

    /** Parses a wire value ({@code running} or {@code paused}, case-insensitive). */
    public static Optional<SandboxState> fromWire(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        for (SandboxState s : values()) {
            if (s.wire.equals(v)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }
}
