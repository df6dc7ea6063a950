package io.agentenv.backend.container.host;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.OptionalInt;

/**
 * A program did not succeed: it could not start, exited non-zero, or ran past its deadline and was killed.
 * The message holds the command line and the tail of its stderr, which is where runc, CRIU, ip and mount explain
 * themselves; callers that treat some failures as success ("already gone") match on {@link #stderrTail()}.
 */
public final class CommandFailedException extends Exception {

    public enum Reason {
        NOT_STARTED,
        EXITED_NONZERO,
        TIMED_OUT
    }

    private final Reason reason;
    private final List<String> argv;
    private final OptionalInt exitCode;
    private final String stderrTail;

    public CommandFailedException(
            Reason reason, List<String> argv, OptionalInt exitCode, String stderrTail, Throwable cause) {
        super(message(reason, argv, exitCode, stderrTail), cause);
        this.reason = requireNonNull(reason, "reason is null");
        this.argv = List.copyOf(argv);
        this.exitCode = requireNonNull(exitCode, "exitCode is null");
        this.stderrTail = requireNonNull(stderrTail, "stderrTail is null");
    }

    public Reason reason() {
        return reason;
    }

    public List<String> argv() {
        return argv;
    }

    public OptionalInt exitCode() {
        return exitCode;
    }

    public String stderrTail() {
        return stderrTail;
    }

    private static String message(Reason reason, List<String> argv, OptionalInt exitCode, String stderrTail) {
        String what = switch (reason) {
            case NOT_STARTED -> "could not start";
            case EXITED_NONZERO -> "exited with status " + exitCode.orElse(-1);
            case TIMED_OUT -> "timed out and was killed";
        };
        String tail = stderrTail.isBlank() ? "" : ": " + stderrTail.strip();
        return "`" + String.join(" ", argv) + "` " + what + tail;
    }
}
