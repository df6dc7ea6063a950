package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ModeStringTest {
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "0100644, -rw-r--r--",
        "0100000, ----------",
        "0100755, -rwxr-xr-x",
        "0040755, drwxr-xr-x",
        "0041777, dtrwxrwxrwx",
        "0120777, Lrwxrwxrwx",
        "0104755, urwxr-xr-x",
        "0102755, grwxr-xr-x",
        "0020666, Dcrw-rw-rw-",
        "0060660, Drw-rw----",
        "0010644, prw-r--r--",
        "0140755, Srwxr-xr-x",
    })
    void formats_modes_like_go_file_mode_string(String octal, String expected) {
        assertThat(ModeString.of(Integer.parseInt(octal, 8))).isEqualTo(expected);
    }
}
