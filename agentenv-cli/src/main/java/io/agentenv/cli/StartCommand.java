package io.agentenv.cli;

import io.agentenv.api.model.NewSandboxV2;
import io.agentenv.api.model.Sandbox;
import io.agentenv.spi.EnvdException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code aenv start}: create a sandbox and attach a shell to it in one step; the sandbox is killed when it ends. */
@Command(
        name = "start",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Create a sandbox and open a shell in it (aenv create, then aenv exec -t).",
            "On a terminal it is an interactive login shell on a pseudo-terminal;",
            "when stdin is not a terminal, bash runs the commands read from it.",
            "The sandbox is killed when the shell ends (or on Ctrl-C without a",
            "terminal), unless --keep. Its id is printed on stderr.",
            "Exit code: the shell's."
        },
        footer = {
            "",
            "Examples:",
            "  aenv start",
            "  aenv start base --keep",
            "  aenv start base --volume data:/data",
            "  echo 'uname -a' | aenv start"
        })
final class StartCommand implements Callable<Integer> {
    @ParentCommand
    private Aenv aenv;

    @Parameters(
            index = "0",
            arity = "0..1",
            defaultValue = "base",
            paramLabel = "TEMPLATE",
            description = "Template id, snapshot id or alias (default: base).")
    private String template;

    @Option(names = "--keep", description = "Keep the sandbox when the shell ends (aenv kill ID removes it).")
    private boolean keep;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "The sandbox's TTL (server default: 300).")
    private Integer timeout;

    @Option(names = "--env", paramLabel = "KEY=VALUE", description = "The sandbox's environment variable (repeatable).")
    private Map<String, String> envVars;

    @Option(names = "--metadata", paramLabel = "KEY=VALUE", description = "Metadata (repeatable).")
    private Map<String, String> metadata;

    @Option(
            names = "--volume",
            paramLabel = VolumeMountOption.SHAPE,
            description = "Mount a volume (name or id) at /PATH, read-only with :ro (repeatable).")
    private List<String> volumes;

    @Option(
            names = {"-u", "--user"},
            paramLabel = "USER",
            description = "Run the shell as USER (default: the sandbox's default user).")
    private String user;

    @Option(
            names = {"-w", "--cwd"},
            paramLabel = "DIR",
            description = "The shell's working directory (default: the user's home).")
    private String cwd;

    @Override
    public Integer call() throws EnvdException {
        List<VolumeMountOption> mounts = VolumeMountOption.parseAll(volumes);
        ApiClient api = aenv.client();
        Sandbox sandbox = api.create(
                new NewSandboxV2(template, timeout, null, null, null, null, null, metadata, envVars, null), mounts);
        String id = sandbox.sandboxID();
        aenv.err()
                .println("aenv: sandbox " + id
                        + (keep ? " (kept when the shell ends)" : " (killed when the shell ends; --keep keeps it)"));
        aenv.err().flush();
        AtomicBoolean ended = new AtomicBoolean();
        Runnable end = () -> {
            if (!keep && ended.compareAndSet(false, true)) {
                try {
                    api.kill(id);
                    aenv.err().println("aenv: killed sandbox " + id);
                } catch (RuntimeException e) {
                    aenv.err()
                            .println("aenv: could not kill sandbox " + id + ": "
                                    + Printable.of(ApiException.describe(e)));
                }
                aenv.err().flush();
            }
        };
        aenv.onInterrupt(end);
        try {
            return ExecCommand.shell(aenv, id, user, cwd).call();
        } finally {
            end.run();
        }
    }
}
