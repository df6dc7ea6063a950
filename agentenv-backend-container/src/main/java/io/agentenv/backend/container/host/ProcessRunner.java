package io.agentenv.backend.container.host;

/**
 * The one seam through which this backend runs external programs (runc, CRIU via runc, ip, mount, cp).
 * Implementations must be safe for concurrent use.
 */
public interface ProcessRunner {

    /**
     * Runs the command to completion.
     *
     * @return its output when it exits with status 0
     * @throws CommandFailedException when it cannot start, exits non-zero, or outlives its timeout (it and its
     *         descendants are then killed)
     * @throws InterruptedException when the calling thread is interrupted (the program is killed first)
     */
    CommandResult run(Command command) throws CommandFailedException, InterruptedException;
}
