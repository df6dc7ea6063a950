package io.agentenv.buildtools;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EnvdAotTrainingTest {
    @Test
    void a_request_closes_its_connection_carries_its_body_and_returns_the_status() throws IOException {
        ByteArrayOutputStream sent = new ByteArrayOutputStream();
        byte[] answer = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".getBytes(UTF_8);

        int status = EnvdAotTraining.exchange(
                new ByteArrayInputStream(answer),
                sent,
                "POST",
                "/init",
                List.of("Content-Type: application/json"),
                "{}".getBytes(UTF_8));

        assertThat(status).isEqualTo(204);
        assertThat(sent.toString(UTF_8))
                .isEqualTo("POST /init HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                        + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    }

    @Test
    void an_answer_that_is_not_http_fails() {
        assertThatThrownBy(() -> EnvdAotTraining.exchange(
                        new ByteArrayInputStream(new byte[0]),
                        new ByteArrayOutputStream(),
                        "GET",
                        "/health",
                        List.of(),
                        null))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("GET /health: not an HTTP answer");
    }

    @Test
    void a_connect_envelope_is_an_uncompressed_frame_with_a_big_endian_length() {
        assertThat(EnvdAotTraining.envelope("{}")).containsExactly(0, 0, 0, 0, 2, '{', '}');
    }
}
