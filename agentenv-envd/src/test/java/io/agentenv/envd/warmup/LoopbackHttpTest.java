package io.agentenv.envd.warmup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LoopbackHttpTest {
    @TempDir
    Path dir;

    @Test
    void a_unix_socket_peer_that_never_answers_fails_the_request_after_the_timeout() throws Exception {
        Path path = dir.resolve("silent.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(path));
            try (LoopbackHttp http = LoopbackHttp.unix(path, Duration.ofMillis(200));
                    SocketChannel accepted = server.accept()) {
                assertThat(accepted.isConnected()).isTrue();
                assertThatThrownBy(() -> http.send("POST", "/init", List.of(), "{}".getBytes(StandardCharsets.UTF_8)))
                        .isInstanceOf(SocketTimeoutException.class)
                        .hasMessageContaining("200 ms");
            }
        }
    }

    @Test
    void a_unix_socket_peer_that_answers_in_time_is_read_through_the_timed_channel() throws Exception {
        Path path = dir.resolve("envd.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(path));
            try (LoopbackHttp http = LoopbackHttp.unix(path, Duration.ofSeconds(30));
                    SocketChannel accepted = server.accept()) {
                accepted.write(ByteBuffer.wrap(
                        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".getBytes(StandardCharsets.US_ASCII)));

                LoopbackHttp.Response response = http.send("GET", "/health", List.of(), null);

                assertThat(response.status()).isEqualTo(200);
                assertThat(response.text()).isEqualTo("hello");
            }
        }
    }
}
