package io.agentenv.cli;

import io.agentenv.api.model.SandboxNetworkUpdateConfig;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code aenv network}: replaces a running sandbox's egress rules ({@code PUT /sandboxes/{id}/network}). */
@Command(
        name = "network",
        mixinStandardHelpOptions = true,
        description = {
            "Replace a sandbox's outbound network rules (no options: clear them).",
            "A CIDR is like 10.0.0.0/8 or 1.2.3.4/32; --deny-out 0.0.0.0/0 with --allow-out exceptions is an allow list."
        })
final class NetworkCommand implements Callable<Integer> {
    @ParentCommand
    private Aenv aenv;

    @Parameters(paramLabel = "SANDBOX_ID")
    private String id;

    @Option(
            names = "--allow-out",
            paramLabel = "CIDR",
            split = ",",
            description = "Allow outbound traffic to CIDR (repeatable).")
    private List<String> allowOut = List.of();

    @Option(
            names = "--deny-out",
            paramLabel = "CIDR",
            split = ",",
            description = "Deny outbound traffic to CIDR (repeatable).")
    private List<String> denyOut = List.of();

    @Option(names = "--no-internet", description = "Deny outbound internet access (except --allow-out).")
    private boolean noInternet;

    @Override
    public Integer call() {
        aenv.client()
                .updateNetwork(
                        id,
                        new SandboxNetworkUpdateConfig(
                                allowOut.isEmpty() ? null : allowOut,
                                denyOut.isEmpty() ? null : denyOut,
                                noInternet ? Boolean.FALSE : null));
        return aenv.say("network rules of " + id + " updated");
    }
}
