package io.agentenv.cli;

import static java.util.Objects.requireNonNull;

import java.io.Console;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The process's standard streams as the commands use them: raw bytes for a command's output and file contents, text
 * writers for tables and messages.
 *
 * @param stdinIsTerminal whether stdin is a terminal (then {@code exec} does not forward it unless told to)
 * @param terminal        the controlling terminal, for {@code exec --tty}
 * @param errIsTerminal   whether stderr is a terminal (then transfers draw a progress bar there)
 */
record Stdio(
        InputStream in,
        OutputStream out,
        OutputStream err,
        boolean stdinIsTerminal,
        Terminal terminal,
        boolean errIsTerminal) {
    Stdio {
        requireNonNull(in, "in is null");
        requireNonNull(out, "out is null");
        requireNonNull(err, "err is null");
        requireNonNull(terminal, "terminal is null");
    }

    /** Without a terminal to switch to raw mode (tests, and {@code exec} without {@code --tty}). */
    Stdio(InputStream in, OutputStream out, OutputStream err, boolean stdinIsTerminal) {
        this(in, out, err, stdinIsTerminal, NO_TERMINAL);
    }

    /** With stderr not a terminal. */
    Stdio(InputStream in, OutputStream out, OutputStream err, boolean stdinIsTerminal, Terminal terminal) {
        this(in, out, err, stdinIsTerminal, terminal, false);
    }

    private static final Terminal NO_TERMINAL = new Terminal() {
        @Override
        public Optional<Size> size() {
            return Optional.empty();
        }

        @Override
        public Runnable enterRawMode() {
            throw new IllegalArgumentException("no terminal");
        }
    };

    static Stdio system() {
        // the descriptors themselves, not System.out: a PrintStream hides write errors such as a closed pipe
        return new Stdio(
                new FileInputStream(FileDescriptor.in),
                new FileOutputStream(FileDescriptor.out),
                new FileOutputStream(FileDescriptor.err),
                isTerminal(0),
                new SttyTerminal(),
                isTerminal(2));
    }

    PrintWriter outWriter() {
        return new PrintWriter(out, true, StandardCharsets.UTF_8);
    }

    PrintWriter errWriter() {
        return new PrintWriter(err, true, StandardCharsets.UTF_8);
    }

    /** On Linux, where the descriptor points; elsewhere whether the JVM has a console. */
    @SuppressWarnings("SystemConsoleNull") // the null test is for a JVM started without a console at all
    private static boolean isTerminal(int fd) {
        try {
            String target =
                    Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty") || target.equals("/dev/console");
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            Console console = System.console(); // never null since JDK 22: isTerminal() tells what null used to
            return console != null && console.isTerminal();
        }
    }
}
