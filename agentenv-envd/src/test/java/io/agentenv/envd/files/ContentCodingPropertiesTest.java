package io.agentenv.envd.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.StringLength;

/** Accept-Encoding and Content-Encoding come from untrusted clients: parsing must never fail. */
class ContentCodingPropertiesTest {
    @Property
    void any_accept_encoding_header_is_answered_without_an_exception(@ForAll @StringLength(max = 200) String header) {
        assertThat(ContentCoding.negotiate(header)).isNotNull();
    }

    @Property
    void any_content_encoding_header_is_classified_without_an_exception(@ForAll @StringLength(max = 200) String header) {
        assertThat(ContentCoding.ofRequest(header)).isNotNull();
    }

    @Property
    void gzip_with_a_positive_weight_is_chosen_unless_identity_weighs_more(
            @ForAll @IntRange(min = 1, max = 1000) int gzipMillis, @ForAll @IntRange(min = 0, max = 1000) int identityMillis) {
        String header = "gzip;q=" + weight(gzipMillis) + ", identity;q=" + weight(identityMillis);

        assertThat(ContentCoding.negotiate(header))
                .contains(gzipMillis >= identityMillis ? ContentCoding.GZIP : ContentCoding.IDENTITY);
    }

    private static String weight(int millis) {
        return millis == 1000 ? "1" : String.format(Locale.ROOT, "0.%03d", millis);
    }
}
