package io.agentenv.backend.container.host;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * One external program to run: an argument array (never a shell string), a deadline, optional bytes for stdin, and
 * what happens to its output.
 *
 * @param argv the program and its arguments; argv[0] is an absolute path or a name looked up in PATH
 * @param timeout how long the program may run before it is killed
 * @param stdin bytes written to the program's stdin, which is then closed; empty means stdin is /dev/null
 * @param output whether stdout and stderr are captured or sent to /dev/null
 */
public record Command(List<String> argv, Duration timeout, Optional<byte[]> stdin, Output output) {

    /** Where the program's stdout and stderr go. */
    public enum Output {
        /** Drained into memory and returned (stdout bounded, stderr's tail kept). */
        CAPTURE,
        /**
         * Sent to /dev/null. For programs that hand their stdio to a long-lived child (runc create and restore pass
         * it to the container), where a pipe would stay open after the program exits.
         */
        DISCARD
    }

    public Command {
        requireNonNull(argv, "argv is null");
        requireNonNull(timeout, "timeout is null");
        requireNonNull(stdin, "stdin is null");
        requireNonNull(output, "output is null");
        argv = List.copyOf(argv);
        if (argv.isEmpty() || argv.getFirst().isBlank()) {
            throw new IllegalArgumentException("argv must name a program");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be > 0: " + timeout);
        }
    }

    public static Command of(Duration timeout, List<String> argv) {
        return new Command(argv, timeout, Optional.empty(), Output.CAPTURE);
    }

    public static Command of(Duration timeout, String... argv) {
        return of(timeout, List.of(argv));
    }

    public Command withStdin(byte[] bytes) {
        return new Command(argv, timeout, Optional.of(bytes.clone()), output);
    }

    public Command discardingOutput() {
        return new Command(argv, timeout, stdin, Output.DISCARD);
    }

    /** The program name and arguments as one line for logs and error messages. */
    String display() {
        return String.join(" ", argv);
    }
}
