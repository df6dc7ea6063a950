package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Tunables of {@link SandboxGuests}.
 *
 * @param sampleInterval    how often every running sandbox's metrics are sampled (5 s by default)
 * @param historyPerSandbox samples kept per sandbox, oldest dropped first (720: an hour at 5 s)
 * @param logPages          at most this many envd log pages (of 1000 entries) are read for one logs request (64)
 */
public record GuestSettings(Duration sampleInterval, int historyPerSandbox, int logPages) {
    public GuestSettings {
        requireNonNull(sampleInterval, "sampleInterval is null");
        if (sampleInterval.isNegative() || sampleInterval.isZero()) {
            throw new IllegalArgumentException("sampleInterval must be positive: " + sampleInterval);
        }
        if (historyPerSandbox < 1) {
            throw new IllegalArgumentException("historyPerSandbox must be >= 1: " + historyPerSandbox);
        }
        if (logPages < 1) {
            throw new IllegalArgumentException("logPages must be >= 1: " + logPages);
        }
    }

    public static GuestSettings defaults() {
        return new GuestSettings(Duration.ofSeconds(5), 720, 64);
    }

    /** These settings with metrics sampled every {@code interval} (the server's {@code AENV_METRICS_SAMPLE_INTERVAL_MS}). */
    public GuestSettings withSampleInterval(Duration interval) {
        return new GuestSettings(interval, historyPerSandbox, logPages);
    }
}
