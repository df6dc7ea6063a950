package io.agentenv.server.metrics;

import static java.util.Objects.requireNonNull;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The Prometheus text exposition format (0.0.4) as the node's and the gateway's {@code GET /metrics} write it: family
 * headers, samples with escaped labels, labelled counters and cumulative histograms with one fixed set of buckets.
 * Lines of a family are sorted by their labels, so a scrape's text is stable.
 */
public final class PrometheusText {
    /** The content type of a scrape's answer. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /** Upper bounds in seconds: sub-millisecond mock calls up to minute-long restores. */
    static final double[] BUCKETS = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};

    private PrometheusText() {}

    /** Writes a family's {@code # HELP} and {@code # TYPE} lines. */
    public static void family(StringBuilder out, String name, String type, String help) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    /** Writes one sample; {@code labels} from {@link #labels}, empty for none. */
    public static void sample(StringBuilder out, String name, String labels, Number value) {
        out.append(name).append(labels).append(' ').append(format(value)).append('\n');
    }

    /** A gauge family with one unlabelled sample. */
    public static void gauge(StringBuilder out, String name, String help, long value) {
        family(out, name, "gauge", help);
        sample(out, name, "", value);
    }

    /** {@code {k1="v1",k2="v2"}} from alternating names and values, values escaped; empty for none. */
    public static String labels(String... namesAndValues) {
        if (namesAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("labels come as name, value pairs");
        }
        if (namesAndValues.length == 0) {
            return "";
        }
        StringBuilder out = new StringBuilder("{");
        for (int i = 0; i < namesAndValues.length; i += 2) {
            if (i > 0) {
                out.append(',');
            }
            out.append(namesAndValues[i])
                    .append("=\"")
                    .append(escape(namesAndValues[i + 1]))
                    .append('"');
        }
        return out.append('}').toString();
    }

    /** A label value escaped as the format wants it (backslash, quote, line feed). */
    public static String escape(String label) {
        return label.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static String format(Number value) {
        if (value instanceof Double d) {
            if (d.isNaN()) {
                return "NaN";
            }
            if (d.isInfinite()) {
                return d > 0 ? "+Inf" : "-Inf";
            }
            return BigDecimal.valueOf(d).toPlainString(); // no exponent: 1764771234.5, not 1.7647712345E9
        }
        return value.toString();
    }

    /** Counters keyed by their label values (fixed label names); lock-free. */
    public static final class Counters {
        private final List<String> labelNames;
        private final ConcurrentHashMap<List<String>, LongAdder> counts = new ConcurrentHashMap<>();

        /** Counters with these label names, in this order. */
        public Counters(String... labelNames) {
            this.labelNames = List.of(labelNames);
        }

        /** Adds one to the counter of {@code labelValues} (as many as there are label names). */
        public void increment(String... labelValues) {
            if (labelValues.length != labelNames.size()) {
                throw new IllegalArgumentException("expected " + labelNames.size() + " label values");
            }
            counts.computeIfAbsent(List.of(labelValues), k -> new LongAdder()).increment();
        }

        /** The count of {@code labelValues}; 0 when never incremented. */
        public long get(String... labelValues) {
            LongAdder count = counts.get(List.of(labelValues));
            return count == null ? 0 : count.sum();
        }

        /** Writes the family (a counter) with one line per label set seen, sorted. */
        public void render(StringBuilder out, String name, String help) {
            family(out, name, "counter", help);
            Map<String, Long> lines = new TreeMap<>();
            counts.forEach((values, count) -> lines.put(labels(pairs(values)), count.sum()));
            lines.forEach((labels, count) -> sample(out, name, labels, count));
        }

        private String[] pairs(List<String> values) {
            List<String> pairs = new ArrayList<>(values.size() * 2);
            for (int i = 0; i < values.size(); i++) {
                pairs.add(labelNames.get(i));
                pairs.add(values.get(i));
            }
            return pairs.toArray(String[]::new);
        }
    }

    /** Histograms keyed by their label values (fixed label names); lock-free. */
    public static final class Histograms {
        private final List<String> labelNames;
        private final ConcurrentHashMap<List<String>, Histogram> histograms = new ConcurrentHashMap<>();

        /** Histograms with these label names, in this order. */
        public Histograms(String... labelNames) {
            this.labelNames = List.of(labelNames);
        }

        /** Records {@code nanos} in the histogram of {@code labelValues}. */
        public void observe(long nanos, String... labelValues) {
            if (labelValues.length != labelNames.size()) {
                throw new IllegalArgumentException("expected " + labelNames.size() + " label values");
            }
            histograms
                    .computeIfAbsent(List.of(labelValues), k -> new Histogram())
                    .observe(nanos);
        }

        /** Writes the family (a histogram) with each label set's buckets, sum and count, sorted by labels. */
        public void render(StringBuilder out, String name, String help) {
            family(out, name, "histogram", help);
            Map<String, Histogram> sorted = new TreeMap<>();
            histograms.forEach((values, h) -> {
                StringBuilder inner = new StringBuilder();
                for (int i = 0; i < values.size(); i++) {
                    if (i > 0) {
                        inner.append(',');
                    }
                    inner.append(labelNames.get(i))
                            .append("=\"")
                            .append(escape(values.get(i)))
                            .append('"');
                }
                sorted.put(inner.toString(), h);
            });
            sorted.forEach((labels, h) -> h.render(out, name, labels));
        }
    }

    /** A cumulative histogram with the fixed {@link #BUCKETS}; lock-free. */
    public static final class Histogram {
        private final LongAdder[] counts = new LongAdder[BUCKETS.length];
        private final LongAdder total = new LongAdder();
        private final LongAdder sumNanos = new LongAdder();

        /** An empty histogram. */
        public Histogram() {
            for (int i = 0; i < counts.length; i++) {
                counts[i] = new LongAdder();
            }
        }

        /** Records one observation of {@code nanos}. */
        public void observe(long nanos) {
            double seconds = nanos / 1e9;
            for (int i = 0; i < BUCKETS.length; i++) {
                if (seconds <= BUCKETS[i]) {
                    counts[i].increment();
                    break;
                }
            }
            total.increment();
            sumNanos.add(nanos);
        }

        /**
         * Writes the {@code _bucket}, {@code _sum} and {@code _count} lines of {@code name}; {@code labels} is the
         * inside of the braces ({@code a="x",b="y"}), before {@code le}.
         */
        public void render(StringBuilder out, String name, String labels) {
            requireNonNull(labels, "labels is null");
            String prefix = labels.isEmpty() ? "" : labels + ",";
            String braces = labels.isEmpty() ? "" : "{" + labels + "}";
            long cumulative = 0;
            for (int i = 0; i < BUCKETS.length; i++) {
                cumulative += counts[i].sum();
                out.append(name)
                        .append("_bucket{")
                        .append(prefix)
                        .append("le=\"")
                        .append(BUCKETS[i])
                        .append("\"} ")
                        .append(cumulative)
                        .append('\n');
            }
            long n = total.sum();
            out.append(name)
                    .append("_bucket{")
                    .append(prefix)
                    .append("le=\"+Inf\"} ")
                    .append(n)
                    .append('\n');
            out.append(name)
                    .append("_sum")
                    .append(braces)
                    .append(' ')
                    .append(sumNanos.sum() / 1e9)
                    .append('\n');
            out.append(name)
                    .append("_count")
                    .append(braces)
                    .append(' ')
                    .append(n)
                    .append('\n');
        }
    }
}
