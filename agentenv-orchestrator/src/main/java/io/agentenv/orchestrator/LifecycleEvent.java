package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.time.Instant;

/** Something that happened to a sandbox, published after the state change is durable. */
public sealed interface LifecycleEvent {
    SandboxId sandbox();

    Instant at();

    record Created(SandboxId sandbox, Instant at, TemplateId template) implements LifecycleEvent {
        public Created {
            requireNonNull(sandbox, "sandbox is null");
            requireNonNull(at, "at is null");
            requireNonNull(template, "template is null");
        }
    }

    record Resumed(SandboxId sandbox, Instant at) implements LifecycleEvent {
        public Resumed {
            requireNonNull(sandbox, "sandbox is null");
            requireNonNull(at, "at is null");
        }
    }

    record Paused(SandboxId sandbox, Instant at) implements LifecycleEvent {
        public Paused {
            requireNonNull(sandbox, "sandbox is null");
            requireNonNull(at, "at is null");
        }
    }

    record Killed(SandboxId sandbox, Instant at) implements LifecycleEvent {
        public Killed {
            requireNonNull(sandbox, "sandbox is null");
            requireNonNull(at, "at is null");
        }
    }

    /** {@code sandbox} is the child; {@code source} the sandbox it was forked from. */
    record Forked(SandboxId sandbox, Instant at, SandboxId source) implements LifecycleEvent {
        public Forked {
            requireNonNull(sandbox, "sandbox is null");
            requireNonNull(at, "at is null");
            requireNonNull(source, "source is null");
        }
    }

    record SnapshotTaken(SandboxId sandbox, Instant at, TemplateId snapshot) implements LifecycleEvent {
        public SnapshotTaken {
            requireNonNull(sandbox, "sandbox is null");
            requireNonNull(at, "at is null");
            requireNonNull(snapshot, "snapshot is null");
        }
    }

    /** The TTL ran out and {@code action} was taken (published after the Paused or Killed event it caused). */
    record TimedOut(SandboxId sandbox, Instant at, TimeoutAction action) implements LifecycleEvent {
        public TimedOut {
            requireNonNull(sandbox, "sandbox is null");
            requireNonNull(at, "at is null");
            requireNonNull(action, "action is null");
        }
    }
}
