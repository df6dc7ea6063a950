package io.agentenv.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PrintableTest {
    @Test
    void plain_text_and_non_ascii_letters_are_kept_as_they_are() {
        String text = "/home/user/données — ok 100%";
        assertThat(Printable.of(text)).isSameAs(text);
    }

    @Test
    void control_characters_are_shown_as_escapes_and_escaping_twice_changes_nothing() {
        String hostile = "a\u001b]0;owned\u0007b\nc\td\u009bJ\u007f";
        String safe = Printable.of(hostile);
        assertThat(safe).isEqualTo("a\\x1b]0;owned\\x07b\\nc\\td\\x9bJ\\x7f");
        assertThat(Printable.of(safe)).isEqualTo(safe);
        assertThat(Printable.of(null)).isNull();
    }
}
