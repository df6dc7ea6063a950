package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * E2B schema {@code VolumeAndToken}: a volume with the token its content routes ({@code /volumecontent/{volumeID}/...})
 * take as {@code Authorization: Bearer}. {@code domain} (where content requests go instead of {@code api.<domain>}) is
 * left out: content requests go to this server's API URL. {@code sizeMiB} is this server's own field.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record VolumeAndToken(String volumeID, String name, String token, String domain, Integer sizeMiB) {
    public VolumeAndToken {
        requireNonNull(volumeID, "volumeID is null");
        requireNonNull(name, "name is null");
        requireNonNull(token, "token is null");
    }
}
