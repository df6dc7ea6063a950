package io.agentenv.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code aenv pull IMAGE}: a template straight from an image (a build with the image as its base and no steps). */
@Command(
        name = "pull",
        mixinStandardHelpOptions = true,
        description = {
            "Make a template from an image: a build with no steps, its log printed as it runs.",
            "A failed build exits 1 with its reason."
        })
final class PullCommand implements Callable<Integer> {
    @ParentCommand
    private Aenv aenv;

    @Parameters(paramLabel = "IMAGE", description = "The image, e.g. e2bdev/base.")
    private String image;

    @Option(
            names = {"--alias", "--name"},
            paramLabel = "NAME",
            description = "The template's name; NAME:TAG also tags the build.")
    private String alias;

    @Option(
            names = {"-t", "--tag"},
            paramLabel = "TAG",
            description = "Tag the build (repeatable).")
    private List<String> tags = new ArrayList<>();

    @Override
    public Integer call() throws IOException {
        return TemplateCommand.build(
                aenv,
                Path.of("."),
                new TemplateBuildRun.Request(
                        Optional.ofNullable(alias),
                        tags,
                        Optional.empty(),
                        Optional.empty(),
                        Optional.of(image),
                        Optional.empty(),
                        List.of(),
                        Optional.empty(),
                        Optional.empty(),
                        false));
    }
}
