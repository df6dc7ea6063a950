package io.agentenv.backend.container.host;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.GuestEndpoint;
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
 * Starts a long-running process through envd's {@code process.Process/Start} (Connect, JSON envelopes), as the SDK's
 * {@code commands.run(..., background)} does: the process is envd's child, in the sandbox's namespaces, so it is part of
 * every later checkpoint. (A process started with {@code runc exec} after a restore is not: runc does not join the
 * restored time namespace, and CRIU refuses to dump it.)
 */
public final class GuestProcesses {

    private static final ObjectMapper JSON = new ObjectMapper();

    private GuestProcesses() {}

    /** Starts {@code cmd args} as {@code user} and returns its pid once envd reports the start. */
    public static long start(GuestEndpoint guest, AccessToken token, String user, String cmd, List<String> args)
            throws Exception {
        byte[] message = JSON.writeValueAsBytes(Map.of("process", Map.of("cmd", cmd, "args", args)));
        ByteBuffer envelope = ByteBuffer.allocate(5 + message.length)
                .put((byte) 0)
                .putInt(message.length)
                .put(message);
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://" + guest.host() + ":" + guest.port() + "/process.Process/Start"))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/connect+json")
                .header("X-Access-Token", token.value())
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString((user + ":").getBytes(StandardCharsets.UTF_8)))
                .POST(HttpRequest.BodyPublishers.ofByteArray(envelope.array()))
                .build();
        // A client per call: sandboxes of earlier tests had the same address, and a connection pooled to one of them
        // would be reset by the sandbox that has the address now.
        try (HttpClient http = HttpClient.newBuilder()
                        .connectTimeout(Duration.ofSeconds(5))
                        .build();
                DataInputStream in = new DataInputStream(startStream(http, request))) {
            while (true) {
                int flags = in.readUnsignedByte();
                byte[] body = new byte[in.readInt()];
                in.readFully(body);
                JsonNode node = JSON.readTree(body);
                if ((flags & 0x02) != 0) {
                    throw new IllegalStateException("process stream ended before the start event: " + node);
                }
                JsonNode pid = node.path("event").path("start").path("pid");
                if (pid.isNumber()) {
                    return pid.asLong(); // closing the stream leaves the process running
                }
            }
        }
    }

    private static InputStream startStream(HttpClient http, HttpRequest request) throws Exception {
        HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        if (response.statusCode() != 200) {
            try (InputStream body = response.body()) {
                throw new IllegalStateException("process start answered " + response.statusCode() + ": "
                        + new String(body.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        return response.body();
    }
}
