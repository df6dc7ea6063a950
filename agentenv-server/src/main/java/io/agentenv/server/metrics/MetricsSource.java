package io.agentenv.server.metrics;

/** More metric families for a {@code GET /metrics} answer, written in {@link PrometheusText}'s format. */
@FunctionalInterface
public interface MetricsSource {
    /** Nothing more: a lone server's metrics. */
    MetricsSource NONE = out -> {};

    /** Appends whole families (help, type and samples) to {@code out}. */
    void render(StringBuilder out);
}
