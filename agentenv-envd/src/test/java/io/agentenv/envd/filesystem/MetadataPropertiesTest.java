package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Metadata arrives in client headers: validation either accepts it or refuses it as an invalid argument. Checked on
 * boundary cases with a known outcome and on {@value #TRIES} generated maps; every generated map is built from its own
 * seed, shown in its name, and {@code metadata(new SplittableRandom(seed))} rebuilds it alone.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class MetadataPropertiesTest {
    private static final long SEED = 0xE2B_0003L;
    private static final int TRIES = 1000;
    private static final int MAX_ENTRIES = 5;
    private static final int MAX_KEY_LENGTH = 300;
    private static final int MAX_VALUE_LENGTH = 2000;
    /** What one entry costs besides its key and value: the {@code user.e2b.} attribute name prefix. */
    private static final int ENTRY_OVERHEAD = "user.e2b.".length();

    private static final int LONGEST_KEY = 255 - ENTRY_OVERHEAD;
    private static final int TOTAL_LIMIT = 4096;
    private static final char[] UNUSUAL = {
        '\0', '\t', '\n', '\r', 0x1f, 0x7f, 0x80, 0xa0, 0xe9, 0xff, 0x130, 0x2028, 0xd800, 0xdbff, 0xdc00, 0xdfff,
        0xfeff, 0xfffd, 0xfffe, 0xffff
    };

    /** Maven's report names a failing case by its index only: put the case's name, with its seed, in the failure. */
    @RegisterExtension
    static final TestExecutionExceptionHandler NAME_THE_FAILING_CASE = (context, failure) -> {
        throw new AssertionError(context.getDisplayName() + " failed: " + failure, failure);
    };

    static Stream<Arguments> generatedMetadata() {
        return new SplittableRandom(SEED)
                .longs(TRIES)
                .mapToObj(
                        seed -> argumentSet("seed 0x" + Long.toHexString(seed), metadata(new SplittableRandom(seed))));
    }

    static Stream<Arguments> boundaryCases() {
        String longestKey = "k".repeat(LONGEST_KEY);
        String fullValue = "v".repeat(TOTAL_LIMIT - ENTRY_OVERHEAD - 1);
        Map<String, String> largestGenerated = new HashMap<>();
        for (int i = 0; i < MAX_ENTRIES; i++) {
            largestGenerated.put(String.valueOf(i).repeat(MAX_KEY_LENGTH), "~".repeat(MAX_VALUE_LENGTH));
        }
        Map<String, String> fiveEntriesOverTheTotal = new HashMap<>();
        for (int i = 0; i < MAX_ENTRIES; i++) {
            fiveEntriesOverTheTotal.put("key" + i, " ".repeat(MAX_VALUE_LENGTH));
        }
        return Stream.of(
                argumentSet("no metadata is accepted", Map.of(), true),
                argumentSet("an empty value is accepted", Map.of("k", ""), true),
                argumentSet("the first and last printable characters are accepted", Map.of(" ~", "~ "), true),
                argumentSet("every printable character is accepted", Map.of(printableAscii(), printableAscii()), true),
                argumentSet("the longest key is accepted", Map.of(longestKey, "v"), true),
                argumentSet("a key one longer than the longest is refused", Map.of(longestKey + "k", "v"), false),
                argumentSet("an empty key is refused", Map.of("", "v"), false),
                argumentSet("a total of exactly the limit is accepted", Map.of("k", fullValue), true),
                argumentSet("a total one over the limit is refused", Map.of("k", fullValue + "v"), false),
                argumentSet("five long printable entries over the total are refused", fiveEntriesOverTheTotal, false),
                argumentSet("the largest generated map is refused", largestGenerated, false),
                argumentSet("a control character in a key is refused", Map.of("a\u001fb", "v"), false),
                argumentSet("DEL in a value is refused", Map.of("k", "\u007f"), false),
                argumentSet("NUL in a value is refused", Map.of("k", "a\0b"), false),
                argumentSet("a non-ASCII letter in a key is refused", Map.of("caf\u00e9", "v"), false),
                argumentSet("a lone surrogate in a value is refused", Map.of("k", "\ud800"), false),
                argumentSet("an emoji in a value is refused", Map.of("k", "\ud83d\ude00"), false));
    }

    @ParameterizedTest
    @MethodSource("generatedMetadata")
    void validation_fails_only_with_invalid_argument(Map<String, String> metadata) {
        try {
            Metadata.validate(metadata);
        } catch (FsException e) {
            assertThat(e.error()).isEqualTo(FsError.INVALID_ARGUMENT);
            assertThat(e.getMessage()).isNotBlank();
        }
    }

    @ParameterizedTest
    @MethodSource("boundaryCases")
    void validation_accepts_or_refuses_boundary_cases_as_an_invalid_argument(
            Map<String, String> metadata, boolean accepted) {
        if (accepted) {
            assertThatCode(() -> Metadata.validate(metadata)).doesNotThrowAnyException();
        } else {
            assertThatThrownBy(() -> Metadata.validate(metadata))
                    .isInstanceOfSatisfying(
                            FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.INVALID_ARGUMENT));
        }
    }

    /**
     * Up to {@value #MAX_ENTRIES} entries, keys of up to {@value #MAX_KEY_LENGTH} characters and values of up to
     * {@value #MAX_VALUE_LENGTH}; most strings are printable ASCII so that acceptance and the size limits are reached,
     * the others mix in control, non-ASCII and surrogate characters.
     */
    static Map<String, String> metadata(RandomGenerator random) {
        Map<String, String> metadata = new HashMap<>();
        int entries = size(random, MAX_ENTRIES);
        for (int i = 0; i < entries; i++) {
            metadata.put(string(random, MAX_KEY_LENGTH), string(random, MAX_VALUE_LENGTH));
        }
        return metadata;
    }

    private static String string(RandomGenerator random, int maxLength) {
        boolean printableOnly = random.nextInt(3) != 0;
        int length = size(random, maxLength);
        StringBuilder out = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            out.append(printableOnly ? printable(random) : character(random));
        }
        return out.toString();
    }

    private static char character(RandomGenerator random) {
        return switch (random.nextInt(4)) {
            case 0, 1 -> printable(random);
            case 2 -> UNUSUAL[random.nextInt(UNUSUAL.length)];
            default -> (char) random.nextInt(Character.MAX_VALUE + 1);
        };
    }

    private static char printable(RandomGenerator random) {
        return (char) random.nextInt(0x20, 0x7f);
    }

    /** Uniform in {@code [0, max]}, with 0, 1 and max drawn more often since they are where off-by-one errors live. */
    private static int size(RandomGenerator random, int max) {
        return switch (random.nextInt(10)) {
            case 0 -> 0;
            case 1 -> 1;
            case 2 -> max;
            default -> random.nextInt(max + 1);
        };
    }

    private static String printableAscii() {
        return IntStream.rangeClosed(0x20, 0x7e)
                .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
                .toString();
    }
}
