package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

/** Where a sandbox's initial state comes from. */
public sealed interface LaunchSource {
    /** A fresh boot of a built-in template. */
    record Template(TemplateId template) implements LaunchSource {
        public Template {
            requireNonNull(template, "template is null");
        }
    }

    /**
     * A restore of a snapshot (create-from-snapshot and fork children); the snapshot stays usable afterwards. Once
     * {@link SandboxBackend#start} has returned, the instance must not depend on the snapshot's artifact directory:
     * the orchestrator deletes a fork's capture right after the children started, and a catalog snapshot when the
     * user deletes it (copy, hard-link or share read-only through the backend's own reference counting).
     */
    record Snapshot(SnapshotState state) implements LaunchSource {
        public Snapshot {
            requireNonNull(state, "state is null");
        }
    }

    /**
     * A resume of this same sandbox from what {@link SandboxBackend#pause} produced. After a successful start the
     * orchestrator deletes the paused artifact directory, so the backend moves out whatever it keeps using (a rename
     * on the same filesystem); after a failed start the directory must still hold a resumable state.
     */
    record Paused(PausedState state) implements LaunchSource {
        public Paused {
            requireNonNull(state, "state is null");
        }
    }
}
