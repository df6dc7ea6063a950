package io.agentenv.buildtools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * Test names are sentences short enough to read in a report: at most {@value #LIMIT} characters, for the JUnit
 * methods of every module (snake_case sentences) and for the e2e suites' {@code test('...')} names.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TestNameLengthTest {
    static final int LIMIT = 80;

    /** A snake_case method: a test method, or a helper named like one. */
    private static final Pattern JAVA_TEST = Pattern.compile("\\bvoid\\s+([a-z][A-Za-z0-9]*_\\w*)\\s*\\(");

    /** {@code test('name'} or {@code hostTest('name'} with any of Node's three quotes, escapes included. */
    private static final Pattern NODE_TEST =
            Pattern.compile("\\b(?:test|hostTest)\\(\\s*(['\"`])((?:\\\\.|(?!\\1).)*)\\1");

    /** Surefire runs this module's tests in its own directory; the repository is its parent. */
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void junit_and_e2e_test_names_are_at_most_80_characters() throws IOException {
        List<Path> sources = new ArrayList<>();
        try (Stream<Path> modules = Files.list(ROOT)) {
            for (Path testJava : modules.map(m -> m.resolve("src/test/java"))
                    .filter(Files::isDirectory)
                    .toList()) {
                try (Stream<Path> files = Files.walk(testJava)) {
                    files.filter(f -> f.toString().endsWith(".java")).forEach(sources::add);
                }
            }
        }
        Path e2e = ROOT.resolve("e2e/tests");
        if (Files.isDirectory(e2e)) {
            try (Stream<Path> files = Files.list(e2e)) {
                files.filter(f -> f.toString().endsWith(".test.mjs")).forEach(sources::add);
            }
        }
        assertThat(sources).as("test sources under " + ROOT).isNotEmpty();

        List<String> tooLong =
                sources.stream().flatMap(TestNameLengthTest::tooLong).toList();

        assertThat(tooLong)
                .as("test names over %d characters: shorten them, keeping the sentence", LIMIT)
                .isEmpty();
    }

    @Test
    void names_are_found_in_both_languages_and_measured_as_they_read() {
        String java = "@Test\n    void a_short_sentence() {}\n    void helper(int x) {}";
        String node = "test('it\\'s fine', async () => {});\ntest(\"two\", () => {});\ntest(`three`, t => {});"
                + "\nhostTest('four', async () => {});";

        assertThat(names(JAVA_TEST, 1, java)).containsExactly("a_short_sentence");
        assertThat(names(NODE_TEST, 2, node)).containsExactly("it's fine", "two", "three", "four");
    }

    private static Stream<String> tooLong(Path source) {
        String text;
        try {
            text = Files.readString(source);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        boolean java = source.toString().endsWith(".java");
        List<String> names = java ? names(JAVA_TEST, 1, text) : names(NODE_TEST, 2, text);
        return names.stream()
                .filter(name -> name.length() > LIMIT)
                .map(name -> ROOT.relativize(source) + ": " + name + " (" + name.length() + ")");
    }

    private static List<String> names(Pattern pattern, int group, String text) {
        List<String> names = new ArrayList<>();
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            names.add(m.group(group).replaceAll("\\\\(.)", "$1"));
        }
        return names;
    }
}
