package io.agentenv.cli;

import io.agentenv.api.model.SandboxMetric;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code aenv metrics}: the sandbox's sampled CPU, memory and disk use. */
@Command(
        name = "metrics",
        mixinStandardHelpOptions = true,
        description = "Print a sandbox's sampled CPU, memory and disk use, oldest first.")
final class MetricsCommand implements Callable<Integer> {
    private static final double MIB = 1024.0 * 1024.0;

    @ParentCommand
    private Aenv aenv;

    @Parameters(paramLabel = "SANDBOX_ID")
    private String id;

    @Override
    public Integer call() {
        List<SandboxMetric> metrics = aenv.client().metrics(id);
        if (aenv.output() == Aenv.Output.json) {
            return aenv.printJson(metrics);
        }
        Table table =
                new Table("TIME", "CPUS", "CPU %", "MEMORY MiB", "MEMORY TOTAL MiB", "DISK MiB", "DISK TOTAL MiB");
        for (SandboxMetric m : metrics) {
            table.row(
                    m.timestamp(),
                    m.cpuCount(),
                    String.format(Locale.ROOT, "%.1f", m.cpuUsedPct()),
                    mib(m.memUsed()),
                    mib(m.memTotal()),
                    mib(m.diskUsed()),
                    mib(m.diskTotal()));
        }
        table.print(aenv.out());
        return 0;
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.0f", bytes / MIB);
    }
}
