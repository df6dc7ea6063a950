package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

/** E2B schema {@code Volume}: a volume as {@code GET /volumes} lists it. */
public record Volume(String name, String volumeID) {
    public Volume {
        requireNonNull(name, "name is null");
        requireNonNull(volumeID, "volumeID is null");
    }
}
