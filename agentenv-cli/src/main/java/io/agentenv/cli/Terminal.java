package io.agentenv.cli;

import java.util.Optional;

/** The local terminal, for {@code exec --tty}: its size, and raw mode while a remote pseudo-terminal is attached. */
interface Terminal {
    /** Columns and rows. */
    record Size(int cols, int rows) {
        public Size {
            if (cols < 1 || rows < 1 || cols > 65535 || rows > 65535) {
                throw new IllegalArgumentException("terminal size out of range: " + cols + "x" + rows);
            }
        }
    }

    /** The current size, if it can be read. */
    Optional<Size> size();

    /**
     * Switches to raw mode (no echo, no line editing, keys such as Ctrl-C passed on as bytes); the returned action
     * restores the previous mode and may be run more than once.
     */
    Runnable enterRawMode();
}
