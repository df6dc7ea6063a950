package io.agentenv.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ObjectKeyTest {

    @ParameterizedTest
    @ValueSource(
            strings = {
                "a",
                "templates/base/rootfs.tar",
                "checkpoints/sbx-1/3/pages-1.img",
                "snapshots/2024_01_02/tree.tar",
                "a.b/c..d/e.",
                "-dash/_under"
            })
    void validKeys(String value) {
        ObjectKey key = new ObjectKey(value);

        assertThat(key.value()).isEqualTo(value);
        assertThat(ObjectKey.isValid(value)).isTrue();
        assertThat(String.join("/", key.segments())).isEqualTo(value);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "/",
                "/abs",
                "trailing/",
                "a//b",
                ".",
                "..",
                "a/../b",
                "../escape",
                "a/./b",
                ".hidden",
                "a/.hidden",
                "with space",
                "back\\slash",
                "new\nline",
                "nul\0byte",
                "ünïcode",
                "colon:x",
                "star*",
                "at@sign"
            })
    void invalidKeys(String value) {
        assertThat(ObjectKey.isValid(value)).isFalse();
        assertThatThrownBy(() -> new ObjectKey(value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid object key");
    }

    @Test
    void lengthsAreBounded() {
        assertThat(ObjectKey.isValid("s".repeat(ObjectKey.MAX_SEGMENT_LENGTH))).isTrue();
        assertThat(ObjectKey.isValid("s".repeat(ObjectKey.MAX_SEGMENT_LENGTH + 1)))
                .isFalse();
        String longKey = ("s".repeat(100) + "/").repeat(10) + "s".repeat(13);
        assertThat(longKey).hasSize(1023);
        assertThat(ObjectKey.isValid(longKey)).isTrue();
        assertThat(ObjectKey.isValid(longKey + "ss")).isFalse();
    }

    @Test
    void messagesShowControlCharactersEscaped() {
        assertThatThrownBy(() -> new ObjectKey("bad\u0007key")).hasMessageContaining("bad\\u0007key");
    }

    @Test
    void keysAreBuiltFromParts() {
        assertThat(ObjectKey.of("a", "b/c", "d")).isEqualTo(new ObjectKey("a/b/c/d"));
        assertThat(ObjectKey.of("a").resolve("b")).isEqualTo(new ObjectKey("a/b"));
        assertThat(ObjectKey.of("a/b/c").name()).isEqualTo("c");
        assertThatThrownBy(() -> ObjectKey.of("a", "..")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ObjectKey.of("a").resolve("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void keysSortAsStrings() {
        assertThat(new ObjectKey("a/b")).isLessThan(new ObjectKey("a/c")).isLessThan(new ObjectKey("b"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a", "a/", "a/b", "a/b/", "templates/ba"})
    void validPrefixes(String prefix) {
        assertThat(ObjectKey.checkPrefix(prefix)).isEqualTo(prefix);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/", "/a", "a//", "../", "a/../", "a//b/", ".", "a/.x"})
    void invalidPrefixes(String prefix) {
        assertThatThrownBy(() -> ObjectKey.checkPrefix(prefix))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid prefix");
    }
}
