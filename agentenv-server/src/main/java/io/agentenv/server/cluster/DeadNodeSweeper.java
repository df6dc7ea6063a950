package io.agentenv.server.cluster;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeRegistry;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Declares nodes dead: every {@code interval}, the registry is asked to declare dead the nodes whose lease ran out
 * more than {@code grace} ago. Every node runs one; the registry reports each death to exactly one caller, which logs
 * it and tells {@code onLost} about each sandbox the dead node was running.
 */
public final class DeadNodeSweeper implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DeadNodeSweeper.class);

    private final NodeRegistry registry;
    private final Duration grace;
    private final Duration interval;
    private final Consumer<LostSandbox> onLost;
    private final Thread sweeper;

    public DeadNodeSweeper(NodeRegistry registry, Duration grace, Duration interval, Consumer<LostSandbox> onLost) {
        this.registry = requireNonNull(registry, "registry is null");
        this.grace = requireNonNull(grace, "grace is null");
        this.interval = requireNonNull(interval, "interval is null");
        this.onLost = requireNonNull(onLost, "onLost is null");
        this.sweeper = Thread.ofVirtual().name("aenv-dead-nodes").start(this::loop);
    }

    /** One sweep (also what the loop runs). */
    void sweep() {
        List<NodeRegistry.DeadNode> dead =
                registry.declareDead(grace, "its lease ran out " + grace.toSeconds() + " s before");
        for (NodeRegistry.DeadNode node : dead) {
            log.atWarn()
                    .addKeyValue("node", node.node().value())
                    .addKeyValue("epoch", node.epoch())
                    .addKeyValue("lost", node.lost().size())
                    .addKeyValue("released", node.released().size())
                    .log("cluster: node declared dead; its running sandboxes are lost, its paused ones resume"
                            + " on other nodes");
            for (LostSandbox lost : node.lost()) {
                log.atWarn()
                        .addKeyValue("sandbox_id", lost.sandboxId())
                        .addKeyValue("node", lost.node().value())
                        .log("cluster: sandbox lost with its node");
                try {
                    onLost.accept(lost);
                } catch (RuntimeException e) {
                    log.atWarn()
                            .setCause(e)
                            .addKeyValue("sandbox_id", lost.sandboxId())
                            .log("cluster: reporting a lost sandbox failed");
                }
            }
        }
    }

    @Override
    public void close() {
        sweeper.interrupt();
    }

    private void loop() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(interval);
            } catch (InterruptedException e) {
                return;
            }
            try {
                sweep();
            } catch (RuntimeException e) {
                log.atDebug().setCause(e).log("cluster: the dead-node sweep failed; retrying");
            }
        }
    }
}
