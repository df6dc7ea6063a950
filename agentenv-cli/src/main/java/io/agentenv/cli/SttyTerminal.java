package io.agentenv.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** The controlling terminal ({@code /dev/tty}) through stty(1): the JDK cannot switch a terminal to raw mode itself. */
final class SttyTerminal implements Terminal {
    private static final File TTY = new File("/dev/tty");

    @Override
    public Optional<Size> size() {
        return stty("size").flatMap(text -> {
            String[] parts = text.strip().split("\\s+");
            try {
                return parts.length == 2
                        ? Optional.of(new Size(Integer.parseInt(parts[1]), Integer.parseInt(parts[0])))
                        : Optional.empty();
            } catch (IllegalArgumentException e) {
                return Optional.empty(); // "0 0" on a terminal that does not know its size
            }
        });
    }

    @Override
    public Runnable enterRawMode() {
        String saved = stty("-g")
                .map(String::strip)
                .filter(s -> !s.isEmpty())
                .orElseThrow(
                        () -> new ApiException(0, "cannot read the terminal's settings (stty -g on /dev/tty failed)"));
        if (stty("raw", "-echo").isEmpty()) {
            throw new ApiException(0, "cannot switch the terminal to raw mode (stty raw -echo failed)");
        }
        return () -> stty(saved);
    }

    /** Runs stty on /dev/tty; its output when it succeeded. */
    private static Optional<String> stty(String... args) {
        String[] command = new String[args.length + 1];
        command[0] = "stty";
        System.arraycopy(args, 0, command, 1, args.length);
        try {
            Process stty = new ProcessBuilder(command)
                    .redirectInput(TTY)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            String out = new String(stty.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!stty.waitFor(5, TimeUnit.SECONDS)) {
                stty.destroyForcibly();
                return Optional.empty();
            }
            return stty.exitValue() == 0 ? Optional.of(out) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
