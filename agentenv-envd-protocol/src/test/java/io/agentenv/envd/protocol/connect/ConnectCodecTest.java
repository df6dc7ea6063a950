package io.agentenv.envd.protocol.connect;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.SendSignalRequest;
import io.agentenv.envd.protocol.process.Signal;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ConnectCodecTest {

    @Test
    void the_sdk_start_envelope_parses_into_a_start_request() throws Exception {
        byte[] json =
                "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"echo hi\"]},\"stdin\":false,\"future\":1}"
                        .getBytes(UTF_8);
        Envelope frame = Envelope.read(
                        new ByteArrayInputStream(Envelope.message(json).encode()), 4096)
                .orElseThrow();

        StartRequest request = WireFormat.JSON.parse(frame.payload(), StartRequest.getDefaultInstance());

        assertThat(request.getProcess().getCmd()).isEqualTo("/bin/bash");
        assertThat(request.getProcess().getArgsList()).containsExactly("-l", "-c", "echo hi");
        assertThat(request.hasStdin()).isTrue();
        assertThat(request.getStdin()).isFalse();
        assertThat(request.hasPty()).isFalse();
    }

    @Test
    void events_print_as_camel_case_json_with_base64_bytes() {
        StartResponse data = StartResponse.newBuilder()
                .setEvent(ProcessEvent.newBuilder()
                        .setData(ProcessEvent.DataEvent.newBuilder().setStdout(ByteString.copyFromUtf8("hi\n"))))
                .build();
        StartResponse end = StartResponse.newBuilder()
                .setEvent(ProcessEvent.newBuilder()
                        .setEnd(ProcessEvent.EndEvent.newBuilder()
                                .setExitCode(1)
                                .setExited(true)
                                .setStatus("exit status 1")))
                .build();

        assertThat(new String(WireFormat.JSON.serialize(data), UTF_8))
                .isEqualTo("{\"event\":{\"data\":{\"stdout\":\"aGkK\"}}}");
        assertThat(new String(WireFormat.JSON.serialize(end), UTF_8))
                .isEqualTo("{\"event\":{\"end\":{\"exitCode\":1,\"exited\":true,\"status\":\"exit status 1\"}}}");
    }

    @Test
    void enums_are_read_by_name_and_binary_proto_round_trips() {
        SendSignalRequest request = WireFormat.JSON.parse(
                "{\"process\":{\"pid\":7},\"signal\":\"SIGNAL_SIGKILL\"}".getBytes(UTF_8),
                SendSignalRequest.getDefaultInstance());

        assertThat(request.getSignal()).isEqualTo(Signal.SIGNAL_SIGKILL);
        assertThat(WireFormat.PROTO.parse(WireFormat.PROTO.serialize(request), SendSignalRequest.getDefaultInstance()))
                .isEqualTo(request);
    }

    @Test
    void malformed_json_is_an_invalid_argument_error() {
        assertThatThrownBy(
                        () -> WireFormat.JSON.parse("{\"process\":".getBytes(UTF_8), StartRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(
                        RpcException.class, e -> assertThat(e.code()).isEqualTo(ConnectCode.INVALID_ARGUMENT));
    }

    @Test
    void an_empty_json_body_is_the_default_message() {
        assertThat(WireFormat.JSON.parse(new byte[0], StartRequest.getDefaultInstance()))
                .isEqualTo(StartRequest.getDefaultInstance());
    }

    @Test
    void a_successful_end_stream_is_an_empty_object_with_flag_two() {
        assertThat(HexFormat.of().formatHex(EndStream.ok().toEnvelope().encode()))
                .isEqualTo("02000000027b7d");
    }

    @Test
    void an_end_stream_carries_the_error_code_as_a_string_and_metadata_as_string_lists() {
        EndStream end = new EndStream(
                Optional.of(RpcException.notFound("process with pid 9 not found")), Map.of("k", List.of("v1", "v2")));

        String json = new String(end.toJson(), UTF_8);

        assertThat(json)
                .isEqualTo(
                        "{\"error\":{\"code\":\"not_found\",\"message\":\"process with pid 9 not found\"},\"metadata\":{\"k\":[\"v1\",\"v2\"]}}");
        EndStream parsed = EndStream.parse(end.toJson());
        assertThat(parsed.error().orElseThrow().code()).isEqualTo(ConnectCode.NOT_FOUND);
        assertThat(parsed.metadata()).isEqualTo(Map.of("k", List.of("v1", "v2")));
    }

    @Test
    void unary_errors_map_codes_to_http_statuses_and_back() {
        RpcException error = new RpcException(ConnectCode.ALREADY_EXISTS, "exists");

        assertThat(error.code().httpStatus()).isEqualTo(409);
        assertThat(RpcException.fromUnaryResponse(409, error.toJson()).code()).isEqualTo(ConnectCode.ALREADY_EXISTS);
        assertThat(RpcException.fromUnaryResponse(404, "nope".getBytes(UTF_8)).code())
                .isEqualTo(ConnectCode.UNIMPLEMENTED);
    }

    @Test
    void content_types_select_the_wire_format() {
        assertThat(WireFormat.ofUnary("application/json; charset=utf-8")).contains(WireFormat.JSON);
        assertThat(WireFormat.ofUnary("application/proto")).contains(WireFormat.PROTO);
        assertThat(WireFormat.ofStream("application/connect+json")).contains(WireFormat.JSON);
        assertThat(WireFormat.ofStream("application/connect+proto")).contains(WireFormat.PROTO);
        assertThat(WireFormat.ofUnary("application/connect+json")).isEmpty();
        assertThat(WireFormat.ofUnary("text/plain")).isEmpty();
    }

    @Test
    void the_timeout_header_is_at_most_ten_digits() {
        assertThat(ConnectHeaders.timeout("5000")).contains(Duration.ofSeconds(5));
        assertThat(ConnectHeaders.timeout(null)).isEmpty();
        assertThatThrownBy(() -> ConnectHeaders.timeout("12345678901")).isInstanceOf(RpcException.class);
        assertThatThrownBy(() -> ConnectHeaders.timeout("-1")).isInstanceOf(RpcException.class);
    }
}
