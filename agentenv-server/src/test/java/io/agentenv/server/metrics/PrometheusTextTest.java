package io.agentenv.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** The text format both /metrics answers share: families, escaped labels, sorted counters, cumulative histograms. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PrometheusTextTest {
    @Test
    void a_gauge_is_a_help_a_type_and_a_sample() {
        StringBuilder out = new StringBuilder();
        PrometheusText.gauge(out, "aenv_x", "An x.", 7);
        assertThat(out).hasToString("# HELP aenv_x An x.\n# TYPE aenv_x gauge\naenv_x 7\n");
    }

    @Test
    void label_values_are_escaped_and_doubles_written_as_prometheus_reads_them() {
        StringBuilder out = new StringBuilder();
        PrometheusText.sample(out, "m", PrometheusText.labels("a", "say \"hi\"\\\nbye", "b", "2"), 0.5);
        PrometheusText.sample(out, "m", "", Double.NaN);
        PrometheusText.sample(out, "m", "", Double.POSITIVE_INFINITY);
        PrometheusText.sample(out, "m", "", 1_764_771_234.5);
        assertThat(out).hasToString("m{a=\"say \\\"hi\\\"\\\\\\nbye\",b=\"2\"} 0.5\nm NaN\nm +Inf\nm 1764771234.5\n");
        assertThat(PrometheusText.labels()).isEmpty();
        assertThatThrownBy(() -> PrometheusText.labels("odd")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void counters_render_one_sorted_line_per_label_set() {
        PrometheusText.Counters counters = new PrometheusText.Counters("route", "status");
        counters.increment("sandbox", "200");
        counters.increment("create", "201");
        counters.increment("sandbox", "200");
        StringBuilder out = new StringBuilder();
        counters.render(out, "aenv_requests_total", "Requests.");
        assertThat(out)
                .hasToString("# HELP aenv_requests_total Requests.\n# TYPE aenv_requests_total counter\n"
                        + "aenv_requests_total{route=\"create\",status=\"201\"} 1\n"
                        + "aenv_requests_total{route=\"sandbox\",status=\"200\"} 2\n");
        assertThat(counters.get("sandbox", "200")).isEqualTo(2);
        assertThat(counters.get("sandbox", "500")).isZero();
        assertThatThrownBy(() -> counters.increment("one")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void a_histogram_counts_cumulatively_with_its_sum_and_count() {
        PrometheusText.Histograms histograms = new PrometheusText.Histograms("route");
        histograms.observe(2_000_000, "any"); // 2 ms: the 0.005 bucket
        histograms.observe(300_000_000, "any"); // 300 ms: the 0.5 bucket
        histograms.observe(500_000_000_000L, "any"); // 500 s: only +Inf
        StringBuilder out = new StringBuilder();
        histograms.render(out, "aenv_d_seconds", "D.");
        String text = out.toString();
        assertThat(text)
                .startsWith("# HELP aenv_d_seconds D.\n# TYPE aenv_d_seconds histogram\n")
                .contains("aenv_d_seconds_bucket{route=\"any\",le=\"0.001\"} 0\n")
                .contains("aenv_d_seconds_bucket{route=\"any\",le=\"0.005\"} 1\n")
                .contains("aenv_d_seconds_bucket{route=\"any\",le=\"0.25\"} 1\n")
                .contains("aenv_d_seconds_bucket{route=\"any\",le=\"0.5\"} 2\n")
                .contains("aenv_d_seconds_bucket{route=\"any\",le=\"120.0\"} 2\n")
                .contains("aenv_d_seconds_bucket{route=\"any\",le=\"+Inf\"} 3\n")
                .contains("aenv_d_seconds_sum{route=\"any\"} 500.302\n")
                .endsWith("aenv_d_seconds_count{route=\"any\"} 3\n");

        PrometheusText.Histogram bare = new PrometheusText.Histogram();
        bare.observe(1_000_000);
        StringBuilder unlabelled = new StringBuilder();
        bare.render(unlabelled, "h", "");
        assertThat(unlabelled.toString())
                .contains("h_bucket{le=\"0.001\"} 1\n")
                .contains("h_sum 0.001\n")
                .endsWith("h_count 1\n");
    }
}
