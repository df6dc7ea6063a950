package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ByteRangeTest {
    @Test
    void firstToLastFirstToEndAndSuffix() {
        assertThat(ByteRange.parse("bytes=2-5", 10))
                .hasValueSatisfying(r -> assertThat(r).containsExactly(2, 5));
        assertThat(ByteRange.parse("bytes=7-", 10))
                .hasValueSatisfying(r -> assertThat(r).containsExactly(7, 9));
        assertThat(ByteRange.parse("bytes=-3", 10))
                .hasValueSatisfying(r -> assertThat(r).containsExactly(7, 9));
        assertThat(ByteRange.parse("bytes=-30", 10))
                .hasValueSatisfying(r -> assertThat(r).containsExactly(0, 9));
        assertThat(ByteRange.parse("bytes=5-100", 10))
                .hasValueSatisfying(r -> assertThat(r).containsExactly(5, 9));
    }

    @Test
    void otherHeadersAreIgnored() {
        assertThat(ByteRange.parse("bytes=1-2,4-5", 10)).isEmpty();
        assertThat(ByteRange.parse("items=1-2", 10)).isEmpty();
        assertThat(ByteRange.parse("bytes=5-2", 10)).isEmpty();
        assertThat(ByteRange.parse("bytes=x-2", 10)).isEmpty();
        assertThat(ByteRange.parse("bytes=-", 10)).isEmpty();
    }

    @Test
    void startPastTheEndIsUnsatisfiable() {
        assertThatThrownBy(() -> ByteRange.parse("bytes=10-", 10))
                .isInstanceOf(HttpProblem.class)
                .extracting(e -> ((HttpProblem) e).status())
                .isEqualTo(416);
        assertThatThrownBy(() -> ByteRange.parse("bytes=0-", 0)).isInstanceOf(HttpProblem.class);
    }
}
