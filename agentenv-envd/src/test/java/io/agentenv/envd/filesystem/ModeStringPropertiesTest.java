package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class ModeStringPropertiesTest {
    @Property
    void the_last_nine_characters_spell_the_permission_bits(@ForAll @IntRange(min = 0, max = 0177777) int mode) {
        String text = ModeString.of(mode);
        String rwx = text.substring(text.length() - 9);

        for (int i = 0; i < 9; i++) {
            boolean set = (mode & (1 << (8 - i))) != 0;
            assertThat(rwx.charAt(i)).isEqualTo(set ? "rwxrwxrwx".charAt(i) : '-');
        }
    }

    @Property
    void a_regular_file_without_special_bits_has_exactly_ten_characters_starting_with_a_dash(
            @ForAll @IntRange(min = 0, max = 0777) int permissions) {
        String text = ModeString.of(ModeString.S_IFREG | permissions);

        assertThat(text).hasSize(10).startsWith("-");
    }
}
