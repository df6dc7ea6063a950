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

    /** A restore of a snapshot (create-from-snapshot and fork children); the snapshot stays usable afterwards. */
    record Snapshot(SnapshotState state) implements LaunchSource {
        public Snapshot {
            requireNonNull(state, "state is null");
        }
    }

    /** A resume of this same sandbox from what {@link SandboxBackend#pause} produced. */
    record Paused(PausedState state) implements LaunchSource {
        public Paused {
            requireNonNull(state, "state is null");
        }
    }
}
