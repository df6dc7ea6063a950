package io.agentenv.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code aenv template}: {@code build} (a Dockerfile and its context, or a base with RUN lines, through the template
 * build API with its log as it runs), {@code list} ({@code aenv templates}) and {@code rm}.
 */
@Command(
        name = "template",
        mixinStandardHelpOptions = true,
        description = "Build, list and delete templates.",
        subcommands = {
            TemplateCommand.Build.class,
            TemplateCommand.ListTemplates.class,
            TemplateCommand.Remove.class,
            CommandLine.HelpCommand.class
        })
final class TemplateCommand implements Callable<Integer> {
    @ParentCommand
    Aenv aenv;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a subcommand: build, list or rm");
    }

    @Command(
            name = "build",
            mixinStandardHelpOptions = true,
            description = {
                "Build a template from a Dockerfile (FROM, RUN, COPY, ADD, ENV, WORKDIR, USER, ARG, CMD,",
                "ENTRYPOINT) and its context directory, or from --from-image/--from-template with --run lines.",
                "The build's log is printed as it runs; a failed build exits 1 with its reason."
            })
    static final class Build implements Callable<Integer> {
        @ParentCommand
        TemplateCommand parent;

        @Parameters(
                index = "0",
                arity = "0..1",
                paramLabel = "CONTEXT",
                description = "The directory COPY sources are in (default: the current directory).")
        Path context;

        @Option(
                names = {"-f", "--file"},
                paramLabel = "DOCKERFILE",
                description = "The Dockerfile (default: CONTEXT/Dockerfile).")
        Path dockerfile;

        @Option(names = "--from-image", paramLabel = "IMAGE", description = "Start from this image (no Dockerfile).")
        String fromImage;

        @Option(
                names = "--from-template",
                paramLabel = "TEMPLATE",
                description = "Start from this template (no Dockerfile).")
        String fromTemplate;

        @Option(
                names = "--run",
                paramLabel = "COMMAND",
                description = "A shell command to run, as root (repeatable; with --from-image/--from-template).")
        List<String> run = new ArrayList<>();

        @Option(
                names = {"--alias", "--name"},
                paramLabel = "NAME",
                description = "The template's name; NAME:TAG also tags the build.")
        String alias;

        @Option(
                names = {"-t", "--tag"},
                paramLabel = "TAG",
                description = "Tag the build (repeatable).")
        List<String> tags = new ArrayList<>();

        @Option(names = "--cpu", paramLabel = "COUNT", description = "vCPUs of its sandboxes.")
        Integer cpu;

        @Option(names = "--memory", paramLabel = "MB", description = "Memory of its sandboxes in MiB.")
        Integer memory;

        @Option(
                names = "--start-cmd",
                paramLabel = "COMMAND",
                description = "The command its sandboxes start with (default: CMD/ENTRYPOINT).")
        String startCmd;

        @Option(
                names = "--ready-cmd",
                paramLabel = "COMMAND",
                description = "A command that succeeds once the start command is ready.")
        String readyCmd;

        @Option(names = "--build-arg", paramLabel = "NAME=VALUE", description = "Set an ARG (repeatable).")
        List<String> buildArgs = new ArrayList<>();

        @Option(names = "--no-cache", description = "Build every step again, and upload COPY files again.")
        boolean noCache;

        @Override
        public Integer call() throws IOException {
            Aenv aenv = parent.aenv;
            Path dir = context == null ? Path.of(".") : context;
            boolean fromBase = fromImage != null || fromTemplate != null;
            if (fromImage != null && fromTemplate != null) {
                throw new IllegalArgumentException("give --from-image or --from-template, not both");
            }
            if (fromBase && dockerfile != null) {
                throw new IllegalArgumentException("give a Dockerfile or --from-image/--from-template, not both");
            }
            if (!fromBase && !run.isEmpty()) {
                throw new IllegalArgumentException("--run goes with --from-image or --from-template");
            }
            if (!Files.isDirectory(dir)) {
                throw new IllegalArgumentException("the context " + dir + " is not a directory");
            }
            TemplateBuildRun.Request request;
            if (fromBase) {
                List<Dockerfile.Step> steps = new ArrayList<>();
                run.forEach(command -> steps.add(new Dockerfile.Step("RUN", List.of(command, "root"))));
                request = request(
                        Optional.ofNullable(fromImage), Optional.ofNullable(fromTemplate), steps, Optional.empty());
            } else {
                Path file = dockerfile == null ? dir.resolve("Dockerfile") : dockerfile;
                String text;
                try {
                    text = Files.readString(file, StandardCharsets.UTF_8);
                } catch (NoSuchFileException e) {
                    throw new IllegalArgumentException(
                            "no Dockerfile at " + file + " (name one with -f, or use --from-image/--from-template)");
                }
                Dockerfile.Plan plan = Dockerfile.parse(text, TemplateBuildRun.pairs(buildArgs, "--build-arg"));
                request = request(Optional.of(plan.fromImage()), Optional.empty(), plan.steps(), plan.startCmd());
            }
            return build(aenv, dir, request);
        }

        private TemplateBuildRun.Request request(
                Optional<String> image,
                Optional<String> template,
                List<Dockerfile.Step> steps,
                Optional<String> dockerfileStart) {
            return new TemplateBuildRun.Request(
                    Optional.ofNullable(alias),
                    tags,
                    Optional.ofNullable(cpu),
                    Optional.ofNullable(memory),
                    image,
                    template,
                    steps,
                    Optional.ofNullable(startCmd).or(() -> dockerfileStart),
                    Optional.ofNullable(readyCmd),
                    noCache);
        }
    }

    /** Runs a build with its log on stdout (stderr with {@code -o json}) and prints what was built. */
    static int build(Aenv aenv, Path context, TemplateBuildRun.Request request) throws IOException {
        PrintWriter log = aenv.output() == Aenv.Output.json ? aenv.err() : aenv.out();
        TemplateBuildRun.Result result =
                new TemplateBuildRun(aenv.client(), log, context, TemplateBuildRun.POLL).run(request);
        if (aenv.output() == Aenv.Output.json) {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("templateID", result.templateId());
            json.put("buildID", result.buildId());
            json.put("names", result.names());
            json.put("tags", result.tags());
            json.put("status", "ready");
            return aenv.printJson(json);
        }
        return aenv.say("template " + result.templateId()
                + (result.names().isEmpty() ? "" : " (" + String.join(", ", result.names()) + ")")
                + " is ready");
    }

    @Command(
            name = "list",
            aliases = "ls",
            mixinStandardHelpOptions = true,
            description = "List templates (as 'aenv templates').")
    static final class ListTemplates implements Callable<Integer> {
        @ParentCommand
        TemplateCommand parent;

        @Override
        public Integer call() {
            return TemplatesCommand.list(parent.aenv);
        }
    }

    @Command(
            name = "rm",
            aliases = "delete",
            mixinStandardHelpOptions = true,
            description = {
                "Delete a template by name or id, with its builds, tags and snapshots.",
                "Refused while a sandbox created from it is running or paused."
            })
    static final class Remove implements Callable<Integer> {
        @ParentCommand
        TemplateCommand parent;

        @Parameters(paramLabel = "NAME|ID")
        String template;

        @Override
        public Integer call() {
            return TemplatesCommand.remove(parent.aenv, template);
        }
    }
}
