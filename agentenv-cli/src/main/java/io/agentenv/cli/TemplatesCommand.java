package io.agentenv.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code aenv templates}: lists templates ({@code GET /templates}) with the status of their latest build and their
 * tags; {@code templates rm} deletes one (as {@code aenv template rm}).
 */
@Command(
        name = "templates",
        mixinStandardHelpOptions = true,
        description = "List templates; 'templates rm NAME|ID' deletes one.",
        subcommands = CommandLine.HelpCommand.class)
final class TemplatesCommand implements Callable<Integer> {
    @ParentCommand
    private Aenv aenv;

    @Override
    public Integer call() {
        return list(aenv);
    }

    @Command(
            name = "rm",
            mixinStandardHelpOptions = true,
            aliases = "delete",
            description = "Delete a template (by name or id).")
    int rm(@Parameters(paramLabel = "NAME|ID") String id) {
        return remove(aenv, id);
    }

    static int list(Aenv aenv) {
        ApiClient client = aenv.client();
        JsonNode templates = client.templates();
        if (aenv.output() == Aenv.Output.json) {
            return aenv.printJson(templates);
        }
        Table table = new Table("TEMPLATE ID", "NAMES", "STATUS", "TAGS", "CREATED");
        for (JsonNode t : templates) {
            List<String> names = new ArrayList<>();
            t.path("names").forEach(a -> names.add(a.asText()));
            if (names.isEmpty()) {
                t.path("aliases").forEach(a -> names.add(a.asText()));
            }
            table.row(
                    text(t, "templateID"),
                    names.isEmpty() ? null : String.join(",", names),
                    text(t, "buildStatus"),
                    tags(client, t),
                    text(t, "createdAt"));
        }
        table.print(aenv.out());
        return 0;
    }

    /** A built template's tags (a built-in template, whose one build has its id, has none). */
    private static String tags(ApiClient client, JsonNode template) {
        String id = text(template, "templateID");
        if (id == null || id.equals(text(template, "buildID"))) {
            return null;
        }
        List<String> tags = new ArrayList<>();
        try {
            client.templateTags(id).forEach(tag -> tags.add(tag.path("tag").asText()));
        } catch (ApiException e) {
            return null; // a server without tags
        }
        return tags.isEmpty() ? null : String.join(",", tags);
    }

    static int remove(Aenv aenv, String id) {
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
