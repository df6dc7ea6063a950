package io.agentenv.envd.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Accept-Encoding and Content-Encoding come from untrusted clients: parsing must never fail. Checked on hand-picked
 * edge headers and on {@value #TRIES} generated ones; every generated header is built from its own seed, shown in its
 * name, and {@code header(new SplittableRandom(seed))} rebuilds it alone.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContentCodingPropertiesTest {
    private static final long SEED = 0xE2B_0004L;
    private static final int TRIES = 1000;
    private static final int MAX_HEADER_LENGTH = 200;
    /** Pieces of real headers, so that generated ones reach the parser's branches and not only its first split. */
    private static final List<String> HEADER_PIECES = List.of(
            "gzip",
            "x-gzip",
            "GZIP",
            "identity",
            "*",
            "br",
            "deflate",
            "zstd",
            ",",
            ";",
            "q=",
            "Q=",
            "=",
            " ",
            "\t",
            "0",
            "1",
            "0.5",
            "0.001",
            "1.000",
            "-1",
            "-0",
            "NaN",
            "Infinity",
            "1e400",
            "0x1p3",
            "1d",
            "1f",
            ".",
            "\"",
            "\0");

    private static final char[] UNUSUAL = {
        '\0', '\t', '\n', '\r', 0x1f, 0x7f, 0x80, 0xa0, 0xe9, 0xff, 0x130, 0x2028, 0xd800, 0xdbff, 0xdc00, 0xdfff,
        0xfeff, 0xfffd, 0xfffe, 0xffff
    };

    /** Maven's report names a failing case by its index only: put the case's name, with its seed, in the failure. */
    @RegisterExtension
    static final TestExecutionExceptionHandler NAME_THE_FAILING_CASE = (context, failure) -> {
        throw new AssertionError(context.getDisplayName() + " failed: " + failure, failure);
    };

    static Stream<Arguments> headers() {
        Stream<Arguments> edges = Stream.of(
                argumentSet("an absent header", (Object) null),
                argumentSet("an empty header", ""),
                argumentSet("blanks only", " \t "),
                argumentSet("separators only", ",;,;"),
                argumentSet("an empty weight", "gzip;q="),
                argumentSet("a weight without a coding", ";q=1"),
                argumentSet("a weight that is not a number", "gzip;q=NaN, identity;q=abc"),
                argumentSet("infinite and negative weights", "gzip;q=1e400, identity;q=-Infinity, *;q=-0"),
                argumentSet("identity refused", "identity;q=0, *;q=0"),
                argumentSet("upper case names and parameters", "GZIP;Q=1, IDENTITY;Q=0"),
                argumentSet("a dotted capital I that lower-cases to two characters", "\u0130dentity"),
                argumentSet("lone surrogates and NUL", "\ud800gzip\udfff;q=\0"),
                argumentSet("the longest header of commas", ",".repeat(MAX_HEADER_LENGTH)),
                argumentSet("the longest header of semicolons", ";".repeat(MAX_HEADER_LENGTH)),
                argumentSet("the longest single coding", "g".repeat(MAX_HEADER_LENGTH)),
                argumentSet("the longest header of repeated weights", "gzip;q=0.5,".repeat(MAX_HEADER_LENGTH / 11)));
        Stream<Arguments> generated = new SplittableRandom(SEED)
                .longs(TRIES)
                .mapToObj(seed -> argumentSet("seed 0x" + Long.toHexString(seed), header(new SplittableRandom(seed))));
        return Stream.concat(edges, generated);
    }

    static Stream<Arguments> weights() {
        Stream<Arguments> edges = Stream.of(new int[][] {
                    {1, 0}, {1, 1}, {1, 2}, {1, 1000}, {999, 1000}, {1000, 1000}, {1000, 999}, {1000, 0}
                })
                .map(pair -> argumentSet(weightsHeader(pair[0], pair[1]), pair[0], pair[1]));
        Stream<Arguments> generated = new SplittableRandom(SEED).longs(TRIES).mapToObj(seed -> {
            SplittableRandom random = new SplittableRandom(seed);
            int gzip = random.nextInt(1, 1001);
            int identity = switch (random.nextInt(4)) {
                case 0 -> gzip;
                case 1 -> gzip - 1;
                case 2 -> Math.min(1000, gzip + 1);
                default -> random.nextInt(0, 1001);
            };
            return argumentSet(
                    weightsHeader(gzip, identity) + " (seed 0x" + Long.toHexString(seed) + ")", gzip, identity);
        });
        return Stream.concat(edges, generated);
    }

    @ParameterizedTest
    @MethodSource("headers")
    void any_accept_encoding_header_is_answered_without_an_exception(String header) {
        assertThat(ContentCoding.negotiate(header)).isNotNull();
    }

    @ParameterizedTest
    @MethodSource("headers")
    void any_content_encoding_header_is_classified_without_an_exception(String header) {
        assertThat(ContentCoding.ofRequest(header)).isNotNull();
    }

    @ParameterizedTest
    @MethodSource("weights")
    void gzip_with_a_positive_weight_is_chosen_unless_identity_weighs_more(int gzipMillis, int identityMillis) {
        assertThat(ContentCoding.negotiate(weightsHeader(gzipMillis, identityMillis)))
                .contains(gzipMillis >= identityMillis ? ContentCoding.GZIP : ContentCoding.IDENTITY);
    }

    /**
     * Up to {@value #MAX_HEADER_LENGTH} characters: either pieces of real headers or single characters (printable
     * ASCII, control, non-ASCII, lone surrogates), cut at the chosen length even inside a piece or a surrogate pair.
     */
    static String header(RandomGenerator random) {
        int length = switch (random.nextInt(10)) {
            case 0 -> 0;
            case 1 -> MAX_HEADER_LENGTH;
            default -> random.nextInt(MAX_HEADER_LENGTH + 1);
        };
        boolean fromPieces = random.nextBoolean();
        StringBuilder out = new StringBuilder(length + 16);
        while (out.length() < length) {
            if (fromPieces) {
                out.append(HEADER_PIECES.get(random.nextInt(HEADER_PIECES.size())));
            } else {
                out.append(character(random));
            }
        }
        out.setLength(length);
        return out.toString();
    }

    private static char character(RandomGenerator random) {
        return switch (random.nextInt(4)) {
            case 0, 1 -> (char) random.nextInt(0x20, 0x7f);
            case 2 -> UNUSUAL[random.nextInt(UNUSUAL.length)];
            default -> (char) random.nextInt(Character.MAX_VALUE + 1);
        };
    }

    private static String weightsHeader(int gzipMillis, int identityMillis) {
        return "gzip;q=" + weight(gzipMillis) + ", identity;q=" + weight(identityMillis);
    }

    private static String weight(int millis) {
        return millis == 1000 ? "1" : String.format(Locale.ROOT, "0.%03d", millis);
    }
}
