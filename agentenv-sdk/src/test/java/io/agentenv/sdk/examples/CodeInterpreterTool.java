package io.agentenv.sdk.examples;

import io.agentenv.sdk.CreateOptions;
import io.agentenv.sdk.Sandbox;
import io.agentenv.sdk.SandboxConfig;
import io.agentenv.sdk.TimeoutException;
import io.agentenv.sdk.commands.CommandExitException;
import io.agentenv.sdk.commands.CommandResult;
import io.agentenv.sdk.commands.RunOptions;
import java.time.Duration;

/**
 * An agent tool in plain Java: it runs the Python code a model wrote in a sandbox of its own and answers with what
 * the code printed, so whatever the code does stays inside the sandbox. One sandbox serves the whole conversation
 * (files and installed packages stay between calls); {@link #close()} kills it.
 *
 * <pre>{@code
 * try (CodeInterpreterTool tool = new CodeInterpreterTool(SandboxConfig.fromEnvironment())) {
 *     String answer = tool.runPython("print(sum(range(10)))");   // "exit code 0\nstdout:\n45\n"
 * }
 * }</pre>
 */
public final class CodeInterpreterTool implements AutoCloseable {
    /** What the tool tells the model it does. */
    public static final String DESCRIPTION =
            "Runs Python 3 code in an isolated Linux sandbox and returns its exit code, "
                    + "stdout and stderr. Files written under /home/user stay for later calls.";

    private final Sandbox sandbox;
    private final Duration timeout;

    /** A tool with its own sandbox (10 minutes to live, extended on every call) and 60 s per run. */
    public CodeInterpreterTool(SandboxConfig config) {
        this(config, Duration.ofSeconds(60));
    }

    /** A tool whose runs may take up to {@code timeout}. */
    public CodeInterpreterTool(SandboxConfig config, Duration timeout) {
        this.sandbox = Sandbox.create(
                CreateOptions.builder()
                        .timeout(Duration.ofMinutes(10))
                        .metadata("purpose", "code-interpreter-tool")
                        .build(),
                config);
        this.timeout = timeout;
    }

    /** Runs {@code code} with python3; the answer is meant for the model (never an exception). */
    public String runPython(String code) {
        sandbox.setTimeout(Duration.ofMinutes(10));
        sandbox.files().write("/home/user/main.py", code);
        try {
            CommandResult result = sandbox.commands()
                    .run(
                            "python3 /home/user/main.py",
                            RunOptions.builder().timeout(timeout).build());
            return format(result.exitCode(), result.stdout(), result.stderr());
        } catch (CommandExitException e) {
            return format(e.exitCode(), e.stdout(), e.stderr());
        } catch (TimeoutException e) {
            return "the code did not finish within " + timeout.toSeconds() + " s and was stopped";
        }
    }

    private static String format(int exitCode, String stdout, String stderr) {
        StringBuilder answer = new StringBuilder("exit code ").append(exitCode).append('\n');
        if (!stdout.isEmpty()) {
            answer.append("stdout:\n").append(clip(stdout));
        }
        if (!stderr.isEmpty()) {
            answer.append("stderr:\n").append(clip(stderr));
        }
        return answer.toString();
    }

    /** Keeps answers small enough for a model's context. */
    private static String clip(String text) {
        return text.length() <= 8000
                ? text
                : text.substring(0, 8000) + "\n[... " + (text.length() - 8000) + " more characters]\n";
    }

    /** The sandbox the tool runs code in. */
    public Sandbox sandbox() {
        return sandbox;
    }

    /** Kills the sandbox. */
    @Override
    public void close() {
        sandbox.close();
    }

    /** Runs one snippet with E2B_API_KEY / E2B_API_URL / E2B_SANDBOX_URL from the environment. */
    public static void main(String[] args) {
        try (CodeInterpreterTool tool = new CodeInterpreterTool(SandboxConfig.fromEnvironment())) {
            System.out.print(tool.runPython(args.length > 0 ? args[0] : "import platform; print(platform.platform())"));
        }
    }
}
