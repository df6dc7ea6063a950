package io.agentenv.backend.container.host;

import java.util.List;

/** Cleanup that goes on past a failed step: each step's failure is collected, interruption stops at once. */
public final class Attempts {
    private Attempts() {}

    /** One step that may fail. */
    public interface Step {
        void run() throws Exception;
    }

    /** Runs {@code step} and adds how it failed to {@code failures}, so the steps after it still run. */
    public static void attempt(List<Exception> failures, Step step) throws InterruptedException {
        try {
            step.run();
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            failures.add(e);
        }
    }

    /** Runs {@code step} and returns the milliseconds it took. */
    public static long timed(Step step) throws Exception {
        long started = System.nanoTime();
        step.run();
        return (System.nanoTime() - started) / 1_000_000;
    }
}
