package io.agentenv.envd.protocol.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

class EnvelopePropertiesTest {

    @Provide
    Arbitrary<Envelope> envelopes() {
        return Arbitraries.integers().between(0, 255).flatMap(flags ->
                Arbitraries.bytes().array(byte[].class).ofMaxSize(300).map(p -> new Envelope(flags, p)));
    }

    @Property
    void any_sequence_of_envelopes_reads_back_identically(@ForAll @Size(max = 8) List<@From("envelopes") Envelope> frames)
            throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Envelope e : frames) {
            e.writeTo(out);
        }
        InputStream in = new ByteArrayInputStream(out.toByteArray());
        List<Envelope> read = new ArrayList<>();
        for (Optional<Envelope> next = Envelope.read(in, 1 << 20); next.isPresent(); next = Envelope.read(in, 1 << 20)) {
            read.add(next.get());
        }
        assertThat(read).isEqualTo(frames);
    }

    @Property
    void a_frame_cut_anywhere_after_its_first_byte_is_an_incomplete_envelope(
            @ForAll("envelopes") Envelope frame, @ForAll @IntRange(min = 1, max = 400) int cut) {
        byte[] bytes = frame.encode();
        int keep = Math.min(cut, bytes.length - 1);
        if (keep < 1) {
            return;
        }
        InputStream in = new ByteArrayInputStream(bytes, 0, keep);
        assertThatThrownBy(() -> Envelope.read(in, 1 << 20))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(ConnectCode.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).isEqualTo("protocol error: incomplete envelope");
                });
    }

    @Property
    void the_header_holds_the_flags_and_the_big_endian_length(@ForAll("envelopes") Envelope frame) {
        byte[] bytes = frame.encode();
        int length = ((bytes[1] & 0xff) << 24) | ((bytes[2] & 0xff) << 16) | ((bytes[3] & 0xff) << 8) | (bytes[4] & 0xff);
        assertThat(bytes[0] & 0xff).isEqualTo(frame.flags());
        assertThat(length).isEqualTo(frame.payload().length).isEqualTo(bytes.length - Envelope.HEADER_LENGTH);
    }
}
