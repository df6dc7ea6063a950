package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The mode space is small (16 file types times 4096 permission and special bits), so these properties check every
 * mode rather than a random sample of them.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ModeStringPropertiesTest {
    private static final int LOW_BITS = 07777;

    static Stream<Arguments> fileTypes() {
        return IntStream.rangeClosed(0, ModeString.S_IFMT >>> 12)
                .map(type -> type << 12)
                .mapToObj(type -> argumentSet(String.format("type bits %06o", type), type));
    }

    @ParameterizedTest
    @MethodSource("fileTypes")
    void the_last_nine_characters_spell_the_permission_bits(int type) {
        for (int low = 0; low <= LOW_BITS; low++) {
            int mode = type | low;
            String text = ModeString.of(mode);
            String rwx = text.substring(text.length() - 9);

            StringBuilder expected = new StringBuilder(9);
            for (int i = 0; i < 9; i++) {
                boolean set = (mode & (1 << (8 - i))) != 0;
                expected.append(set ? "rwxrwxrwx".charAt(i) : '-');
            }
            assertThat(rwx).as("mode %06o formatted as %s", mode, text).isEqualTo(expected.toString());
        }
    }

    @Test
    void a_regular_file_without_special_bits_has_ten_characters_starting_with_a_dash() {
        for (int permissions = 0; permissions <= 0777; permissions++) {
            String text = ModeString.of(ModeString.S_IFREG | permissions);

            assertThat(text).as("permissions %03o", permissions).hasSize(10).startsWith("-");
        }
    }
}
