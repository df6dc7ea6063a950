package io.agentenv.sdk.commands;

import io.agentenv.sdk.InvalidArgumentException;

/**
 * A terminal's size in characters.
 *
 * @param cols columns (1..65535)
 * @param rows rows (1..65535)
 */
public record PtySize(int cols, int rows) {
    /** Checks the range. */
    public PtySize {
        if (cols < 1 || cols > 65535 || rows < 1 || rows > 65535) {
            throw new InvalidArgumentException("a terminal size needs 1..65535 columns and rows: " + cols + "x" + rows);
        }
    }
}
