package io.agentenv.volumes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class VolumeNamesTest {
    @Test
    void acceptsLowercaseLettersDigitsDashAndUnderscore() {
        assertThat(VolumeNames.isValid("data")).isTrue();
        assertThat(VolumeNames.isValid("my-volume_2")).isTrue();
        assertThat(VolumeNames.isValid("0cache")).isTrue();
        assertThat(VolumeNames.isValid("a".repeat(63))).isTrue();
    }

    @Test
    void refusesEmptyLongUppercaseAndOtherCharacters() {
        assertThat(VolumeNames.isValid("")).isFalse();
        assertThat(VolumeNames.isValid(null)).isFalse();
        assertThat(VolumeNames.isValid("a".repeat(64))).isFalse();
        assertThat(VolumeNames.isValid("Data")).isFalse();
        assertThat(VolumeNames.isValid("-lead")).isFalse();
        assertThat(VolumeNames.isValid("_lead")).isFalse();
        assertThat(VolumeNames.isValid("a/b")).isFalse();
        assertThat(VolumeNames.isValid("a.b")).isFalse();
        assertThat(VolumeNames.isValid("a b")).isFalse();
        assertThat(VolumeNames.isValid("..")).isFalse();
    }

    @Test
    void checkThrowsInvalidArgument() {
        assertThatThrownBy(() -> VolumeNames.check("Bad"))
                .isInstanceOf(VolumeException.class)
                .extracting(e -> ((VolumeException) e).kind())
                .isEqualTo(VolumeException.Kind.INVALID_ARGUMENT);
    }
}
