package io.agentenv.envd.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContentCodingTest {
    @ParameterizedTest(name = "Accept-Encoding \"{0}\" -> {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "gzip, deflate | GZIP",
                "gzip | GZIP",
                "deflate | IDENTITY",
                "br;q=1, gzip;q=0.5 | GZIP",
                "identity;q=1, gzip;q=0.5 | IDENTITY",
                "gzip;q=0 | IDENTITY",
                "* | IDENTITY",
                "*;q=0, gzip | GZIP",
                "identity;q=0, * | GZIP",
                "GZIP | GZIP",
            })
    void negotiates_the_response_coding(String header, ContentCoding expected) {
        assertThat(ContentCoding.negotiate(header)).contains(expected);
    }

    @Test
    void no_header_means_identity() {
        assertThat(ContentCoding.negotiate(null)).contains(ContentCoding.IDENTITY);
    }

    @Test
    void refusing_identity_without_accepting_gzip_leaves_nothing_acceptable() {
        assertThat(ContentCoding.negotiate("identity;q=0, br")).isEmpty();
        assertThat(ContentCoding.negotiate("*;q=0")).isEmpty();
    }

    @Test
    void request_bodies_may_be_identity_or_gzip_only() {
        assertThat(ContentCoding.ofRequest(null)).contains(ContentCoding.IDENTITY);
        assertThat(ContentCoding.ofRequest("gzip")).contains(ContentCoding.GZIP);
        assertThat(ContentCoding.ofRequest("br")).isEqualTo(Optional.empty());
    }
}
