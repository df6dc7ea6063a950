package io.agentenv.cli;

import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.protocol.process.PTY;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.spi.EnvdException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code aenv exec}: runs a command in a sandbox the way the E2B SDK's {@code commands.run} does. */
@Command(
        name = "exec",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Run a command in a sandbox and stream its stdout and stderr.",
            "It runs as /bin/bash -l -c CMDLINE, like the E2B SDK's commands.run: the",
            "words after -- are quoted into CMDLINE as one argv; -c gives CMDLINE as is.",
            "The local stdin is forwarded when it is not a terminal (or with --stdin).",
            "-t attaches a pseudo-terminal (shells, editors; no COMMAND: a login shell);",
            "keys, Ctrl-C included, then go to the command. Resizing is not followed.",
            "Otherwise Ctrl-C sends SIGTERM to the command's process group; aenv exits 130.",
            "Exit code: the command's; 128+N when signal N killed it; 124 when --timeout",
            "ended it; 141 when the local output was closed (the command gets SIGTERM);",
            "1 when aenv failed (sandbox not found or paused, bad key: reason printed)."
        },
        footer = {
            "",
            "Examples:",
            "  aenv exec SANDBOX_ID -- ls -la /tmp",
            "  aenv exec SANDBOX_ID -c 'ps aux | grep java'",
            "  aenv exec -t SANDBOX_ID",
            "  tar c src | aenv exec SANDBOX_ID -- tar x -C /tmp"
        })
final class ExecCommand implements Callable<Integer> {
    private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9_@%+=:,./-]+");

    @ParentCommand
    private Aenv aenv;

    @Parameters(index = "0", paramLabel = "SANDBOX_ID")
    private String sandboxId;

    @Parameters(index = "1..*", paramLabel = "COMMAND", description = "The command and its arguments (after --).")
    private List<String> argv = List.of();

    @Option(
            names = {"-c", "--command"},
            paramLabel = "SHELL_COMMAND",
            description = "A bash command line, run as is.")
    private String shellCommand;

    @Option(
            names = {"-u", "--user"},
            paramLabel = "USER",
            description = "Run as USER (default: the sandbox's default user).")
    private String user;

    @Option(
            names = {"-w", "--cwd"},
            paramLabel = "DIR",
            description = "Working directory (default: the user's home).")
    private String cwd;

    @Option(
            names = {"-e", "--env"},
            paramLabel = "KEY=VALUE",
            description = "Environment variable for this command (repeatable).")
    private Map<String, String> envs = Map.of();

    @Option(
            names = "--timeout",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description = "Kill the command after SECONDS (default: 0, no limit).")
    private long timeoutSeconds;

    @Option(
            names = {"-i", "--stdin"},
            description = "Forward stdin even when it is a terminal.")
    private boolean forceStdin;

    @Option(names = "--no-stdin", description = "Do not forward stdin (the command's stdin is empty).")
    private boolean noStdin;

    @Option(
            names = {"-t", "--tty"},
            description = "Attach a pseudo-terminal (needs a terminal; implies --stdin).")
    private boolean tty;

    /**
     * A shell in {@code sandboxId}: an interactive login shell on a pseudo-terminal when stdin is a terminal, else a
     * login bash that reads its commands from the forwarded stdin (a script piped in).
     */
    static ExecCommand shell(Aenv aenv, String sandboxId, String user, String cwd) {
        ExecCommand shell = new ExecCommand();
        shell.aenv = aenv;
        shell.sandboxId = sandboxId;
        shell.user = user;
        shell.cwd = cwd;
        if (aenv.stdio().stdinIsTerminal()) {
            shell.tty = true;
        } else {
            shell.shellCommand = "exec bash -s";
        }
        return shell;
    }

    @Override
    public Integer call() throws EnvdException {
        if (timeoutSeconds < 0) {
            throw new IllegalArgumentException("--timeout must be >= 0");
        }
        if ((forceStdin && noStdin) || (tty && noStdin)) {
            throw new IllegalArgumentException((tty ? "--tty" : "--stdin") + " and --no-stdin exclude each other");
        }
        Stdio stdio = aenv.stdio();
        if (tty && !stdio.stdinIsTerminal()) {
            throw new IllegalArgumentException("--tty needs stdin to be a terminal");
        }
        boolean forward = tty || forceStdin || (!noStdin && !stdio.stdinIsTerminal());
        Optional<String> commandLine = commandLine();
        ProcessConfig.Builder process =
                ProcessConfig.newBuilder().setCmd("/bin/bash").putAllEnvs(envs);
        commandLine.ifPresentOrElse(
                line -> process.addAllArgs(List.of("-l", "-c", line)), () -> process.addAllArgs(List.of("-i", "-l")));
        if (cwd != null) {
            process.setCwd(cwd);
        }
        StartRequest.Builder start = StartRequest.newBuilder();
        if (tty) {
            // as the SDK's pty.create does; the command's own --env wins
            Terminal.Size size = stdio.terminal().size().orElse(new Terminal.Size(80, 24));
            process.putEnvs(
                    "TERM",
                    envs.getOrDefault(
                            "TERM",
                            aenv.environment("TERM").filter(t -> !t.isBlank()).orElse("xterm-256color")));
            process.putEnvs("LANG", envs.getOrDefault("LANG", "C.UTF-8"));
            process.putEnvs("LC_ALL", envs.getOrDefault("LC_ALL", "C.UTF-8"));
            start.setPty(PTY.newBuilder()
                    .setSize(PTY.Size.newBuilder().setCols(size.cols()).setRows(size.rows())));
        } else {
            start.setStdin(forward);
        }
        start.setProcess(process);

        EnvdClient envd = aenv.envd(sandboxId);
        RemoteCommand command = new RemoteCommand(envd, stdio.out(), stdio.err(), aenv.err());
        Runnable restoreTerminal = tty ? stdio.terminal().enterRawMode() : () -> {};
        aenv.onInterrupt(() -> {
            restoreTerminal.run();
            try {
                if (command.interrupt()) {
                    aenv.err().println("aenv: interrupted: sent SIGTERM to the command");
                }
            } catch (EnvdException | RuntimeException e) {
                aenv.err()
                        .println("aenv: interrupted: could not signal the command: "
                                + Printable.of(ApiException.describe(e)));
            }
            aenv.err().flush();
        });
        try {
            Optional<InputStream> stdin = forward ? Optional.of(stdio.in()) : Optional.empty();
            return command.run(
                    start.build(),
                    timeoutSeconds == 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(timeoutSeconds)),
                    Optional.ofNullable(user),
                    stdin);
        } finally {
            restoreTerminal.run();
        }
    }

    /** The bash command line, or empty for an interactive login shell (only with --tty). */
    private Optional<String> commandLine() {
        if (shellCommand != null && !argv.isEmpty()) {
            throw new IllegalArgumentException("give either -c SHELL_COMMAND or a command after --, not both");
        }
        if (shellCommand != null) {
            if (shellCommand.isBlank()) {
                throw new IllegalArgumentException("-c needs a command");
            }
            return Optional.of(shellCommand);
        }
        if (argv.isEmpty()) {
            if (tty) {
                return Optional.empty();
            }
            throw new IllegalArgumentException(
                    "no command: aenv exec SANDBOX_ID -- COMMAND [ARGS...] (or -t for a shell)");
        }
        return Optional.of(quote(argv));
    }

    /** Joins an argv into a bash command line that runs exactly that argv. */
    static String quote(List<String> argv) {
        return argv.stream()
                .map(arg -> SAFE.matcher(arg).matches() ? arg : "'" + arg.replace("'", "'\\''") + "'")
                .collect(Collectors.joining(" "));
    }
}
