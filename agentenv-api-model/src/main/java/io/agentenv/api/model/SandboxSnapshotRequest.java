package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.regex.Pattern;

/** Body of {@code POST /sandboxes/{id}/snapshots}: an optional alias ({@code [A-Za-z0-9_-]+}, at most 128 chars). */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SandboxSnapshotRequest(String name) {
    private static final Pattern ALIAS = Pattern.compile("[A-Za-z0-9_-]{1,128}");

    public SandboxSnapshotRequest {
        if (name != null && !ALIAS.matcher(name).matches()) {
            throw new IllegalArgumentException("name must match [A-Za-z0-9_-]{1,128}");
        }
    }
}
