package io.agentenv.orchestrator;

import io.agentenv.spi.SandboxId;
import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Undo steps of a multi-stage operation: each stage that acquires something registers how to give it back; unless
 * {@link #commit()} is called, {@link #close()} runs them newest first. A failing undo step is logged and the others
 * still run.
 */
final class Rollback implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Rollback.class);

    @FunctionalInterface
    interface Undo {
        void run() throws Exception;
    }

    private record Step(String name, Undo undo) {}

    private final SandboxId sandbox;
    private final Deque<Step> steps = new ArrayDeque<>();
    private boolean committed;

    Rollback(SandboxId sandbox) {
        this.sandbox = sandbox;
    }

    void onFailure(String name, Undo undo) {
        steps.push(new Step(name, undo));
    }

    void commit() {
        committed = true;
    }

    @Override
    public void close() {
        if (committed) {
            return;
        }
        while (!steps.isEmpty()) {
            Step step = steps.pop();
            try {
                step.undo().run();
                log.atDebug()
                        .addKeyValue("sandbox_id", sandbox.value())
                        .addKeyValue("step", step.name())
                        .log("rolled back");
            } catch (Exception e) {
                log.atWarn()
                        .addKeyValue("sandbox_id", sandbox.value())
                        .addKeyValue("step", step.name())
                        .setCause(e)
                        .log("rollback step failed");
            }
        }
    }
}
