package io.agentenv.cli;

import io.agentenv.api.model.ClusterNode;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code aenv node}: a cluster's nodes, through a gateway ({@code GET /nodes}, {@code GET /nodes/{id}},
 * {@code POST /nodes/{id}}). A drained node keeps what it runs, takes no new sandboxes, and its paused sandboxes resume
 * on other nodes.
 */
@Command(
        name = "node",
        mixinStandardHelpOptions = true,
        description = {
            "List, show, drain and undrain the nodes of a cluster (ask a gateway).",
            "A drained node keeps what it runs and takes no new sandboxes."
        },
        subcommands = {
            NodeCommand.ListNodes.class,
            NodeCommand.Info.class,
            NodeCommand.Drain.class,
            NodeCommand.Undrain.class,
            CommandLine.HelpCommand.class
        })
final class NodeCommand implements Callable<Integer> {
    @ParentCommand
    Aenv aenv;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a subcommand: ls, info, drain or undrain");
    }

    /** {@code POST /nodes/{node}} with {@code status}; prints the node and its new status. */
    int setStatus(String node, String status) {
        aenv.client().setNodeStatus(node, status);
        aenv.out().println(node + " " + status);
        aenv.out().flush();
        return 0;
    }

    @Command(name = "ls", aliases = "list", mixinStandardHelpOptions = true, description = "List the nodes.")
    static final class ListNodes implements Callable<Integer> {
        @ParentCommand
        NodeCommand parent;

        @Override
        public Integer call() {
            Aenv aenv = parent.aenv;
            List<ClusterNode> nodes = aenv.client().nodes();
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(nodes);
            }
            Table table = new Table("NODE", "STATUS", "SANDBOXES", "CPUS", "LOAD", "MEM AVAILABLE", "ADDRESS");
            for (ClusterNode n : nodes) {
                table.row(
                        n.nodeID(),
                        n.status(),
                        n.sandboxLimit() > 0 ? n.sandboxCount() + "/" + n.sandboxLimit() : n.sandboxCount(),
                        n.metrics().cpuCount(),
                        String.format(java.util.Locale.ROOT, "%.2f", n.metrics().cpuLoad()),
                        (n.metrics().memoryAvailableBytes() >> 20) + " MiB",
                        n.address());
            }
            table.print(aenv.out());
            return 0;
        }
    }

    @Command(name = "info", mixinStandardHelpOptions = true, description = "Show one node.")
    static final class Info implements Callable<Integer> {
        @ParentCommand
        NodeCommand parent;

        @Parameters(paramLabel = "NODE")
        String node;

        @Override
        public Integer call() {
            Aenv aenv = parent.aenv;
            ClusterNode n = aenv.client().node(node);
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(n);
            }
            Table table = new Table("FIELD", "VALUE");
            table.row("node", n.nodeID())
                    .row("status", n.status())
                    .row("address", n.address())
                    .row("epoch", n.epoch())
                    .row("lease until", n.leaseUntil())
                    .row("registered", n.registeredAt())
                    .row("sandboxes", n.sandboxCount() + (n.sandboxLimit() > 0 ? "/" + n.sandboxLimit() : ""))
                    .row("cpus", n.metrics().cpuCount())
                    .row(
                            "memory",
                            (n.metrics().memoryAvailableBytes() >> 20) + " of "
                                    + (n.metrics().memoryTotalBytes() >> 20) + " MiB available")
                    .row(
                            "warm pool",
                            n.warmPool().isEmpty() ? "-" : n.warmPool().toString())
                    .row("templates", String.join(", ", n.templates()));
            table.print(aenv.out());
            return 0;
        }
    }

    @Command(
            name = "drain",
            mixinStandardHelpOptions = true,
            description = "Stop placing new sandboxes on NODE; its paused sandboxes resume elsewhere.")
    static final class Drain implements Callable<Integer> {
        @ParentCommand
        NodeCommand parent;

        @Parameters(paramLabel = "NODE")
        String node;

        @Override
        public Integer call() {
            return parent.setStatus(node, "draining");
        }
    }

    @Command(name = "undrain", mixinStandardHelpOptions = true, description = "Let NODE take new sandboxes again.")
    static final class Undrain implements Callable<Integer> {
        @ParentCommand
        NodeCommand parent;

        @Parameters(paramLabel = "NODE")
        String node;

        @Override
        public Integer call() {
            return parent.setStatus(node, "ready");
        }
    }
}
