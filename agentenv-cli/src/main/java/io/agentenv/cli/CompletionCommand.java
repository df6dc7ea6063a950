package io.agentenv.cli;

import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code aenv completion bash}: prints the shell completion script picocli generates from aenv's commands. */
@Command(
        name = "completion",
        mixinStandardHelpOptions = true,
        description = {
            "Print the shell completion script for SHELL (bash).",
            "Load it into the current shell with: source <(aenv completion bash)",
            "(zsh loads it after: autoload -U bashcompinit && bashcompinit)"
        })
final class CompletionCommand implements Callable<Integer> {
    enum Shell {
        bash
    }

    @ParentCommand
    private Aenv aenv;

    @Spec
    private CommandSpec spec;

    @SuppressWarnings("UnusedVariable") // picocli checks SHELL against Shell's values; bash is the only one so far
    @Parameters(paramLabel = "SHELL", description = "bash.")
    private Shell shell;

    @Override
    public Integer call() {
        aenv.out().print(AutoComplete.bash("aenv", spec.root().commandLine()));
        aenv.out().flush();
        return 0;
    }
}
