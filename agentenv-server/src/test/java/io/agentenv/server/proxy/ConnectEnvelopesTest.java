package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ConnectEnvelopesTest {
    private static byte[] envelope(int flags, String json) {
        byte[] body = json.getBytes(UTF_8);
        ByteBuffer b = ByteBuffer.allocate(5 + body.length);
        b.put((byte) flags).putInt(body.length).put(body);
        return b.array();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static final byte[] START = envelope(0, "{\"event\":{\"start\":{\"pid\":5}}}");
    private static final byte[] END = envelope(0, "{\"event\":{\"end\":{\"exited\":true}}}");
    private static final byte[] EOS = envelope(ConnectEnvelopes.END_STREAM_FLAG, "{}");

    @Test
    void a_stream_is_at_its_end_only_right_after_a_complete_end_of_stream_envelope() {
        byte[] stream = concat(START, END, EOS);
        ConnectEnvelopes envelopes = new ConnectEnvelopes();
        for (int i = 0; i < stream.length; i++) {
            envelopes.follow(ByteBuffer.wrap(stream, i, 1));
            assertThat(envelopes.atEndOfStream()).as("after byte %d of %d", i + 1, stream.length)
                    .isEqualTo(i == stream.length - 1);
        }
    }

    @Test
    void bytes_split_anywhere_give_the_same_answer_as_whole() {
        byte[] stream = concat(START, EOS);
        for (int cut = 0; cut <= stream.length; cut++) {
            ConnectEnvelopes envelopes = new ConnectEnvelopes();
            envelopes.follow(ByteBuffer.wrap(stream, 0, cut));
            envelopes.follow(ByteBuffer.wrap(stream, cut, stream.length - cut));
            assertThat(envelopes.atEndOfStream()).as("cut at %d", cut).isTrue();
        }
    }

    @Test
    void data_envelopes_and_bytes_after_the_end_of_stream_are_not_its_end() {
        ConnectEnvelopes data = new ConnectEnvelopes();
        data.follow(ByteBuffer.wrap(concat(START, END)));
        assertThat(data.atEndOfStream()).isFalse();

        ConnectEnvelopes more = new ConnectEnvelopes();
        more.follow(ByteBuffer.wrap(concat(EOS, new byte[] {0, 0})));
        assertThat(more.atEndOfStream()).isFalse();
    }

    @Test
    void an_empty_end_of_stream_envelope_is_complete_with_its_header() {
        ConnectEnvelopes envelopes = new ConnectEnvelopes();
        envelopes.follow(ByteBuffer.wrap(concat(START, new byte[] {ConnectEnvelopes.END_STREAM_FLAG, 0, 0, 0, 0})));
        assertThat(envelopes.atEndOfStream()).isTrue();
    }

    @Test
    void following_reads_the_bytes_without_moving_the_buffer() {
        ByteBuffer bytes = ByteBuffer.wrap(concat(START, EOS));
        new ConnectEnvelopes().follow(bytes);
        assertThat(bytes.position()).isZero();
        assertThat(bytes.remaining()).isEqualTo(START.length + EOS.length);
    }

    @Test
    void only_connect_streaming_content_types_are_followed() {
        assertThat(ConnectEnvelopes.isStream("application/connect+json")).isTrue();
        assertThat(ConnectEnvelopes.isStream("Application/Connect+Proto; charset=utf-8")).isTrue();
        assertThat(ConnectEnvelopes.isStream("application/json")).isFalse();
        assertThat(ConnectEnvelopes.isStream(null)).isFalse();
    }
}
