package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import java.nio.file.Path;
import java.time.Clock;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Restart recovery: makes every stored record agree with what actually exists, explicitly and with a logged reason.
 * <ul>
 *   <li>PAUSED with a decodable paused state: kept, resumable. Without one: removed.</li>
 *   <li>RUNNING, SNAPSHOTTING, FORKING, PAUSING (the pause had not completed): re-attached and RUNNING if the backend
 *       still runs it; otherwise removed.</li>
 *   <li>RESUMING: back to PAUSED if its paused state is intact (a re-attached instance is closed first), else removed.</li>
 *   <li>CREATING (never reported as created) and KILLING: any surviving instance is closed and the record removed.</li>
 * </ul>
 * Then artifact directories that no record refers to are deleted, and the backend is asked to reap host resources
 * of instances no record claims.
 */
final class Recovery {
    private static final Logger log = LoggerFactory.getLogger(Recovery.class);

    private final Records records;
    private final SandboxRuntime runtime;
    private final SandboxBackendFactory backends;
    private final LaunchSpecs specs;
    private final Artifacts artifacts;
    private final HookCalls hooks;
    private final EventBus events;
    private final Clock clock;

    Recovery(
            Records records,
            SandboxRuntime runtime,
            SandboxBackendFactory backends,
            LaunchSpecs specs,
            Artifacts artifacts,
            HookCalls hooks,
            EventBus events,
            Clock clock) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.backends = requireNonNull(backends, "backends is null");
        this.specs = requireNonNull(specs, "specs is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    void run() {
        List<SandboxRecord> stored = records.store().all();
        Set<Path> keep = new HashSet<>();
        int kept = 0;
        int removed = 0;
        for (SandboxRecord record : stored) {
            boolean survived = switch (record.state()) {
                case PAUSED -> keepPaused(record);
                case RUNNING, SNAPSHOTTING, FORKING, PAUSING -> reattach(record);
                case RESUMING -> backToPaused(record);
                case CREATING -> remove(record, reattached(record), "creation was interrupted by a restart");
                case KILLING -> remove(record, reattached(record), "kill was interrupted by a restart");
            };
            if (survived) {
                kept++;
                records.get(record.id())
                        .flatMap(SandboxRecord::paused)
                        .map(StoredState::artifactDir)
                        .map(artifacts::localCopy)
                        .ifPresent(keep::add);
            } else {
                removed++;
            }
        }
        collectSnapshotDirs(keep);
        artifacts.sweepOrphans(keep);
        Set<SandboxId> running = records.store().all().stream()
                .filter(r -> r.state() == SandboxState.RUNNING)
                .map(SandboxRecord::id)
                .collect(Collectors.toSet());
        try {
            backends.reapUnclaimed(running);
        } catch (BackendException | RuntimeException e) {
            log.atWarn().setCause(e).log("the backend could not reap leftovers of a previous run");
        }
        log.atInfo().addKeyValue("kept", kept).addKeyValue("removed", removed).log("restart recovery finished");
    }

    private boolean keepPaused(SandboxRecord record) {
        if (record.paused().isEmpty()) {
            return remove(record, Optional.empty(), "paused without a paused state");
        }
        try {
            backends.decodePausedState(
                    record.paused().get().encoded(), record.paused().get().artifactDir());
            return true;
        } catch (BackendException | RuntimeException e) {
            return remove(record, Optional.empty(), "its paused state cannot be restored: " + e.getMessage());
        }
    }

    private boolean reattach(SandboxRecord record) {
        Optional<SandboxBackend> backend = reattached(record);
        if (backend.isEmpty()) {
            return remove(record, Optional.empty(), "its runtime vanished during the restart");
        }
        runtime.register(record.id(), backend.get());
        if (record.state() != SandboxState.RUNNING) {
            records.cas(record.id(), record.state(), SandboxState.RUNNING);
        }
        log.atInfo()
                .addKeyValue("sandbox_id", record.id().value())
                .addKeyValue("was", record.state())
                .log("re-attached a running sandbox");
        return true;
    }

    private boolean backToPaused(SandboxRecord record) {
        reattached(record).ifPresent(backend -> closeQuietly(record.id(), backend));
        if (record.paused().isEmpty()) {
            return remove(record, Optional.empty(), "resume was interrupted and no paused state is left");
        }
        hooks.stopLater(record.id(), record.instanceId()); // its start hook may have been sent
        records.cas(record.id(), SandboxState.RESUMING, SandboxState.PAUSED);
        log.atInfo().addKeyValue("sandbox_id", record.id().value()).log("interrupted resume rolled back to paused");
        return keepPaused(records.get(record.id()).orElseThrow());
    }

    private Optional<SandboxBackend> reattached(SandboxRecord record) {
        try {
            return backends.reattach(specs.of(record));
        } catch (BackendException | RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", record.id().value())
                    .setCause(e)
                    .log("re-attach failed");
            return Optional.empty();
        }
    }

    private boolean remove(SandboxRecord record, Optional<SandboxBackend> survivor, String reason) {
        survivor.ifPresent(backend -> closeQuietly(record.id(), backend));
        if (record.state() != SandboxState.PAUSED) { // its instance was started and is gone now
            hooks.stopLater(record.id(), record.instanceId());
        }
        artifacts.deleteSandbox(record.id());
        artifacts.unshareSandbox(record.id());
        records.delete(record.id(), EnumSet.allOf(SandboxState.class));
        log.atWarn()
                .addKeyValue("sandbox_id", record.id().value())
                .addKeyValue("state", record.state())
                .addKeyValue("reason", reason)
                .log("sandbox record removed during restart recovery");
        events.publish(new LifecycleEvent.Killed(record.id(), clock.instant()));
        return false;
    }

    private void collectSnapshotDirs(Set<Path> keep) {
        Optional<Cursor> after = Optional.empty();
        do {
            Page<SnapshotRecord> page =
                    records.store().listSnapshots(new SnapshotQuery(Optional.empty(), Optional.empty(), 1000, after));
            page.items().forEach(s -> keep.add(artifacts.localCopy(s.state().artifactDir())));
            after = page.next();
        } while (after.isPresent());
    }

    private static void closeQuietly(SandboxId id, SandboxBackend backend) {
        try {
            backend.close();
        } catch (BackendException | RuntimeException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("closing a surviving instance failed");
        }
    }
}
