package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * The user and working directory a sandbox's processes get when a request names none: a built template's last USER and
 * WORKDIR, kept with its snapshot and with every sandbox created from it. Empty values leave the server's defaults
 * (its default user, in that user's home).
 */
public record GuestDefaults(Optional<String> user, Optional<String> workdir) {
    /** Neither: the server's defaults. */
    public static final GuestDefaults NONE = new GuestDefaults(Optional.empty(), Optional.empty());

    public GuestDefaults {
        requireNonNull(user, "user is null");
        requireNonNull(workdir, "workdir is null");
        user.ifPresent(u -> {
            if (u.isBlank()) {
                throw new IllegalArgumentException("default user is blank");
            }
        });
        workdir.ifPresent(w -> {
            if (!w.startsWith("/")) {
                throw new IllegalArgumentException("default workdir must be absolute: " + w);
            }
        });
    }
}
