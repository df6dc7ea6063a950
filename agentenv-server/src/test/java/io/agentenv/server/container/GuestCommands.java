package io.agentenv.server.container;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.GuestEndpoint;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Runs commands in a sandbox through its envd ({@code process.Process/Start}, Connect with JSON envelopes) as the
 * SDK's {@code commands.run} does, as user {@code user}.
 */
final class GuestCommands {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** What a finished command printed and how it ended. */
    record Result(String stdout, int exitCode) {}

    private GuestCommands() {}

    /** Runs {@code bash -c script} to its end. */
    static Result run(GuestEndpoint guest, AccessToken token, String script) throws Exception {
        try (DataInputStream in = start(guest, token, script)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            while (true) {
                JsonNode event = next(in);
                JsonNode data = event.path("event").path("data");
                if (data.has("stdout")) {
                    out.write(Base64.getDecoder().decode(data.path("stdout").asText()));
                }
                JsonNode end = event.path("event").path("end");
                if (!end.isMissingNode()) {
                    return new Result(
                            out.toString(StandardCharsets.UTF_8).strip(),
                            end.path("exitCode").asInt(0));
                }
            }
        }
    }

    /** Starts {@code bash -c script} and returns its pid as soon as it runs; the command keeps running. */
    static long background(GuestEndpoint guest, AccessToken token, String script) throws Exception {
        try (DataInputStream in = start(guest, token, script)) {
            while (true) {
                JsonNode pid = next(in).path("event").path("start").path("pid");
                if (pid.isNumber()) {
                    return pid.asLong();
                }
            }
        }
    }

    private static DataInputStream start(GuestEndpoint guest, AccessToken token, String script) throws Exception {
        byte[] message =
                JSON.writeValueAsBytes(Map.of("process", Map.of("cmd", "/bin/bash", "args", List.of("-c", script))));
        ByteBuffer envelope = ByteBuffer.allocate(5 + message.length)
                .put((byte) 0)
                .putInt(message.length)
                .put(message);
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://" + guest.host() + ":" + guest.port() + "/process.Process/Start"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/connect+json")
                .header("X-Access-Token", token.value())
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("user:".getBytes(StandardCharsets.UTF_8)))
                .POST(HttpRequest.BodyPublishers.ofByteArray(envelope.array()))
                .build();
        HttpResponse<InputStream> response = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
        DataInputStream in = new DataInputStream(response.body());
        if (response.statusCode() != 200) {
            String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            in.close();
            throw new IllegalStateException("process start answered " + response.statusCode() + ": " + body);
        }
        return in;
    }

    private static JsonNode next(DataInputStream in) throws Exception {
        int flags = in.readUnsignedByte();
        byte[] body = new byte[in.readInt()];
        in.readFully(body);
        JsonNode node = JSON.readTree(body);
        if ((flags & 0x02) != 0) {
            throw new IllegalStateException("process stream ended: " + node);
        }
        return node;
    }
}
