package io.agentenv.sdk.commands;

import io.agentenv.sdk.SandboxException;

/** A command exited with a non-zero code (thrown by {@link Commands#run} and {@link CommandHandle#waitFor()}). */
public final class CommandExitException extends SandboxException {
    private static final long serialVersionUID = 1L;
    private final transient CommandResult result;

    /** For {@code result}, whose exit code is not 0. */
    public CommandExitException(CommandResult result) {
        super(result.error().orElse("exit status " + result.exitCode()) + " (exit code " + result.exitCode() + ")");
        this.result = result;
    }

    /** The whole result. */
    public CommandResult result() {
        return result;
    }

    /** The exit code. */
    public int exitCode() {
        return result.exitCode();
    }

    /** What it wrote to stdout. */
    public String stdout() {
        return result.stdout();
    }

    /** What it wrote to stderr. */
    public String stderr() {
        return result.stderr();
    }
}
