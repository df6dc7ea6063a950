package io.agentenv.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code aenv templates}: lists templates ({@code GET /templates}); {@code templates rm} deletes one. */
@Command(
        name = "templates",
        mixinStandardHelpOptions = true,
        description = "List templates; 'templates rm ID' deletes one.",
        subcommands = CommandLine.HelpCommand.class)
final class TemplatesCommand implements Callable<Integer> {
    @ParentCommand
    private Aenv aenv;

    @Override
    public Integer call() {
        JsonNode templates = aenv.client().templates();
        if (aenv.output() == Aenv.Output.json) {
            return aenv.printJson(templates);
        }
        Table table = new Table("TEMPLATE ID", "ALIASES", "CPU", "MEMORY MB", "DISK MB", "CREATED");
        for (JsonNode t : templates) {
            List<String> aliases = new ArrayList<>();
            t.path("aliases").forEach(a -> aliases.add(a.asText()));
            table.row(
                    text(t, "templateID"),
                    aliases.isEmpty() ? null : String.join(",", aliases),
                    text(t, "cpuCount"),
                    text(t, "memoryMB"),
                    text(t, "diskSizeMB"),
                    text(t, "createdAt"));
        }
        table.print(aenv.out());
        return 0;
    }

    @Command(
            name = "rm",
            mixinStandardHelpOptions = true,
            aliases = "delete",
            description = "Delete a template (by id or alias).")
    int rm(@Parameters(paramLabel = "TEMPLATE_ID") String id) {
        if (!aenv.client().deleteTemplate(id)) {
            throw new ApiException(404, "template " + id + " not found");
        }
        return aenv.say("deleted template " + id);
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }
}
