package io.agentenv.cli;

import io.agentenv.api.model.SandboxLogEntry;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code aenv logs}: the sandbox's log (envd's own entries and its processes' output), one line per entry. */
@Command(
        name = "logs",
        mixinStandardHelpOptions = true,
        description = "Print a sandbox's logs (envd and its processes' output), oldest first.")
final class LogsCommand implements Callable<Integer> {
    @ParentCommand
    private Aenv aenv;

    @Parameters(paramLabel = "SANDBOX_ID")
    private String id;

    @Option(
            names = "--limit",
            defaultValue = "1000",
            paramLabel = "N",
            description = "At most N entries (1..1000, default: 1000).")
    private int limit;

    @Option(names = "--tail", description = "The newest N entries instead of the oldest.")
    private boolean tail;

    @Option(names = "--level", paramLabel = "LEVEL", description = "Minimum level: debug, info, warn or error.")
    private String level;

    @Option(names = "--search", paramLabel = "TEXT", description = "Only entries whose message contains TEXT.")
    private String search;

    @Override
    public Integer call() {
        if (limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("--limit must be between 1 and 1000");
        }
        List<SandboxLogEntry> entries =
                aenv.client().logs(id, limit, Optional.ofNullable(level), Optional.ofNullable(search), tail);
        if (tail) {
            entries = entries.reversed(); // fetched newest first; printed oldest first
        }
        if (aenv.output() == Aenv.Output.json) {
            return aenv.printJson(entries);
        }
        for (SandboxLogEntry e : entries) {
            StringBuilder line = new StringBuilder()
                    .append(e.timestamp())
                    .append(' ')
                    .append(e.level().toUpperCase(java.util.Locale.ROOT));
            String source = e.fields().get("source");
            if (source != null) {
                line.append(' ').append(source);
                String pid = e.fields().get("pid");
                if (pid != null) {
                    line.append('[').append(pid).append(']');
                }
                String stream = e.fields().containsKey("stream")
                        ? e.fields().get("stream")
                        : e.fields().get("logger");
                if (stream != null) {
                    line.append(' ').append(stream);
                }
            }
            line.append(": ").append(e.message().stripTrailing());
            aenv.out().println(Printable.of(line.toString()));
        }
        aenv.out().flush();
        return 0;
    }
}
