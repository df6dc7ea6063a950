package io.agentenv.backend.container;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a generation: stops the container and releases its overlay, cgroup, network slot and dir. After a pause only
 * the (already released) runtime is gone; the paused files belong to the artifact dir and are never touched here.
 */
final class GenerationRelease {

    private static final Logger log = LoggerFactory.getLogger(GenerationRelease.class);

    private final Generation gen;

    GenerationRelease(Generation gen) {
        this.gen = requireNonNull(gen, "gen is null");
    }

    /** Every step is idempotent, so a failed close can be repeated. */
    void close() throws BackendException {
        var parts = gen.parts;
        var id = gen.id;
        ContainerSandbox.Phase before = gen.phase.getAndSet(ContainerSandbox.Phase.CLOSED);
        gen.closeClient();
        if (before == ContainerSandbox.Phase.PAUSED) {
            return;
        }
        List<Exception> failures = new ArrayList<>();
        try {
            Generation.attempt(failures, () -> parts.cgroups().thawIfFrozen(id.value()));
            if (before != ContainerSandbox.Phase.PREPARED || Files.exists(gen.dirs.bundle().resolve("config.json"))) {
                Generation.attempt(failures, () -> parts.runc().delete(id));
            }
            Generation.attempt(failures, () -> {
                if (!parts.cgroups().pathsOf(id.value()).isEmpty()) {
                    parts.cgroups().reap(id.value());
                }
            });
            Generation.attempt(failures, () -> parts.unmountRootfs(gen.dirs));
            Generation.attempt(failures, gen::releaseSlot);
            Generation.attempt(failures, () -> parts.deleteTree(gen.dirs.dir()));
            Generation.attempt(failures, () -> parts.unclaim(gen.spec.id()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while closing sandbox " + gen.spec.id(), e);
        }
        if (!failures.isEmpty()) {
            throw gen.notReleased("not fully released", failures);
        }
        if (before != ContainerSandbox.Phase.CLOSED) {
            log.atInfo().addKeyValue("sandbox_id", gen.spec.id().value()).log("container sandbox closed");
        }
    }
}
