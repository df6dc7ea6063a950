package io.agentenv.envd.protocol.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Properties of the envelope codec, checked on hand-picked edge frames and on {@value #TRIES} generated cases. Every
 * generated case is built from its own seed, shown in its name; {@code envelope(new SplittableRandom(seed))} (or
 * {@code envelopes(...)}) rebuilds a failing case alone.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EnvelopePropertiesTest {
    private static final long SEED = 0xE2B_0001L;
    private static final int TRIES = 1000;
    private static final int MAX_PAYLOAD = 300;
    private static final int MAX_FRAMES = 8;
    private static final int READ_LIMIT = 1 << 20;

    /** Maven's report names a failing case by its index only: put the case's name, with its seed, in the failure. */
    @RegisterExtension
    static final TestExecutionExceptionHandler NAME_THE_FAILING_CASE = (context, failure) -> {
        throw new AssertionError(context.getDisplayName() + " failed: " + failure, failure);
    };

    static Stream<Arguments> frames() {
        return Stream.concat(
                edgeFrames(), seeds().mapToObj(seed -> argumentSet(name(seed), envelope(new SplittableRandom(seed)))));
    }

    /** Each frame with one more cut to try besides the boundary ones: its last byte for the edge frames, else random. */
    static Stream<Arguments> framesWithACut() {
        Stream<Arguments> edges = edgeFrames().map(edge -> {
            Envelope frame = (Envelope) edge.get()[0];
            return argumentSet(edge.getName(), frame, frame.encode().length - 1);
        });
        Stream<Arguments> generated = seeds().mapToObj(seed -> {
            SplittableRandom random = new SplittableRandom(seed);
            Envelope frame = envelope(random);
            int cut = random.nextInt(1, frame.encode().length);
            return argumentSet(name(seed) + ", cut after " + cut + " bytes", frame, cut);
        });
        return Stream.concat(edges, generated);
    }

    private static Stream<Arguments.ArgumentSet> edgeFrames() {
        return Stream.of(
                argumentSet("empty payload without flags", new Envelope(0, new byte[0])),
                argumentSet("empty payload with every flag bit", new Envelope(0xff, new byte[0])),
                argumentSet("one zero byte, end of stream", Envelope.endStream(new byte[1])),
                argumentSet("every byte value, compressed", new Envelope(Envelope.FLAG_COMPRESSED, everyByteValue())),
                argumentSet("largest generated payload of 0xff bytes", new Envelope(0x80, filled(MAX_PAYLOAD, (byte)
                        0xff))));
    }

    static Stream<Arguments> framesWithMultiByteLengths() {
        return Stream.concat(
                frames(),
                Stream.of(
                        argumentSet("length 256 (0x000100)", Envelope.message(filled(256, (byte) 7))),
                        argumentSet("length 66051 (0x010203)", Envelope.message(filled(0x010203, (byte) 0x80)))));
    }

    static Stream<Arguments> frameSequences() {
        Stream<Arguments> edges = Stream.of(
                argumentSet("no frames", List.of()),
                argumentSet("one frame with an empty payload", List.of(Envelope.message(new byte[0]))),
                argumentSet(
                        "the longest sequence, of empty frames",
                        IntStream.range(0, MAX_FRAMES)
                                .mapToObj(flags -> new Envelope(flags, new byte[0]))
                                .toList()),
                argumentSet(
                        "a large frame between empty ones",
                        List.of(
                                Envelope.endStream(new byte[0]),
                                Envelope.message(filled(0x010203, (byte) 1)),
                                new Envelope(0xff, new byte[0]))),
                argumentSet(
                        "the longest sequence, of the largest frames",
                        IntStream.range(0, MAX_FRAMES)
                                .mapToObj(i -> new Envelope(0xff - i, filled(MAX_PAYLOAD, (byte) i)))
                                .toList()));
        return Stream.concat(
                edges, seeds().mapToObj(seed -> argumentSet(name(seed), envelopes(new SplittableRandom(seed)))));
    }

    @ParameterizedTest
    @MethodSource("frameSequences")
    void any_sequence_of_envelopes_reads_back_identically(List<Envelope> frames) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Envelope e : frames) {
            e.writeTo(out);
        }
        InputStream in = new ByteArrayInputStream(out.toByteArray());
        List<Envelope> read = new ArrayList<>();
        for (Optional<Envelope> next = Envelope.read(in, READ_LIMIT);
                next.isPresent();
                next = Envelope.read(in, READ_LIMIT)) {
            read.add(next.get());
        }
        assertThat(read).isEqualTo(frames);
    }

    @ParameterizedTest
    @MethodSource("framesWithACut")
    void a_frame_cut_anywhere_after_its_first_byte_is_an_incomplete_envelope(Envelope frame, int cut) {
        byte[] bytes = frame.encode();
        // every cut inside the header, just after it, in the middle and before the last byte, plus the given one
        IntStream.concat(
                        IntStream.rangeClosed(1, Envelope.HEADER_LENGTH + 1),
                        IntStream.of(bytes.length / 2, bytes.length - 1, cut))
                .filter(keep -> keep >= 1 && keep < bytes.length)
                .distinct()
                .forEach(keep -> assertThatThrownBy(
                                () -> Envelope.read(new ByteArrayInputStream(bytes, 0, keep), READ_LIMIT))
                        .as("%s cut after %d of its %d bytes", frame, keep, bytes.length)
                        .isInstanceOfSatisfying(RpcException.class, e -> {
                            assertThat(e.code()).isEqualTo(ConnectCode.INVALID_ARGUMENT);
                            assertThat(e.getMessage()).isEqualTo("protocol error: incomplete envelope");
                        }));
    }

    @ParameterizedTest
    @MethodSource("framesWithMultiByteLengths")
    void the_header_holds_the_flags_and_the_big_endian_length(Envelope frame) {
        byte[] bytes = frame.encode();
        int length =
                ((bytes[1] & 0xff) << 24) | ((bytes[2] & 0xff) << 16) | ((bytes[3] & 0xff) << 8) | (bytes[4] & 0xff);
        assertThat(bytes[0] & 0xff).isEqualTo(frame.flags());
        assertThat(length).isEqualTo(frame.payload().length).isEqualTo(bytes.length - Envelope.HEADER_LENGTH);
    }

    /** Any flags byte and a payload of up to {@value #MAX_PAYLOAD} random bytes. */
    static Envelope envelope(RandomGenerator random) {
        byte[] payload = new byte[size(random, MAX_PAYLOAD)];
        random.nextBytes(payload);
        return new Envelope(random.nextInt(0x100), payload);
    }

    /** Up to {@value #MAX_FRAMES} generated frames. */
    static List<Envelope> envelopes(RandomGenerator random) {
        return Stream.generate(() -> envelope(random))
                .limit(size(random, MAX_FRAMES))
                .toList();
    }

    /** Uniform in {@code [0, max]}, with both ends drawn more often since they are where off-by-one errors live. */
    private static int size(RandomGenerator random, int max) {
        return switch (random.nextInt(10)) {
            case 0 -> 0;
            case 1 -> max;
            default -> random.nextInt(max + 1);
        };
    }

    private static LongStream seeds() {
        return new SplittableRandom(SEED).longs(TRIES);
    }

    private static String name(long seed) {
        return "seed 0x" + Long.toHexString(seed);
    }

    private static byte[] everyByteValue() {
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        return all;
    }

    private static byte[] filled(int length, byte value) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, value);
        return bytes;
    }
}
