package io.agentenv.envd.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.protocol.process.ProcessInfo;
import io.agentenv.envd.protocol.rest.InitBody;
import io.agentenv.envd.protocol.rest.LogEntry;
import io.agentenv.envd.protocol.rest.LogPage;
import io.agentenv.envd.protocol.rest.Metrics;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.GuestProcess;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * envd's HTTP bodies: {@code /init} out; {@code /metrics}, {@code /logs} and {@code process.Process/List} (Connect
 * JSON) in. The REST bodies are agentenv-envd-protocol's {@code rest} records, read and written with Jackson; a body
 * that does not have the expected shape is a {@link Malformed}, with a message that names the body but never echoes
 * it.
 */
final class EnvdWire {
    /** The host's mapper of envd's REST records: unknown fields (a newer envd's) are ignored. */
    static final ObjectMapper JSON = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();
    // process.Process/List is a Connect RPC: its JSON is protobuf's proto3 JSON mapping (int64 as strings, enums by
    // name, ...), which only protobuf's JsonFormat reads faithfully; Jackson is for the REST bodies only.
    private static final JsonFormat.Parser PROTO_JSON = JsonFormat.parser().ignoringUnknownFields();

    /** The answer could not be read. */
    static final class Malformed extends Exception {
        Malformed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private EnvdWire() {}

    static InitBody initBody(EnvdInit init) {
        return new InitBody(
                init.accessToken().map(AccessToken::value).orElse(null),
                init.envVars(),
                init.defaultUser().orElse(null),
                init.defaultWorkdir().orElse(null),
                init.timestamp().toString());
    }

    static String init(EnvdInit init) {
        try {
            return JSON.writeValueAsString(initBody(init));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("an init body cannot be written", e);
        }
    }

    static EnvdMetrics metrics(String text) throws Malformed {
        try {
            Metrics m = JSON.readValue(text, Metrics.class);
            return new EnvdMetrics(
                    Instant.ofEpochSecond(m.ts()),
                    m.cpuCount(),
                    m.cpuUsedPct(),
                    m.memUsed(),
                    m.memTotal(),
                    m.memCache(),
                    m.diskUsed(),
                    m.diskTotal());
        } catch (JsonProcessingException | RuntimeException e) {
            throw new Malformed("metrics body is not envd's metrics shape", e);
        }
    }

    static EnvdLogPage logs(String text) throws Malformed {
        try {
            LogPage page = JSON.readValue(text, LogPage.class);
            List<EnvdLogEntry> out = new ArrayList<>(page.entries().size());
            for (LogEntry e : page.entries()) {
                out.add(new EnvdLogEntry(
                        e.seq(),
                        Instant.parse(e.timestamp()),
                        EnvdLogEntry.Source.valueOf(e.source().toUpperCase(Locale.ROOT)),
                        e.level(),
                        e.pid() == null ? OptionalInt.empty() : OptionalInt.of(e.pid()),
                        e.stream(),
                        e.message()));
            }
            return new EnvdLogPage(out, page.nextCursor(), page.firstAvailable());
        } catch (JsonProcessingException | RuntimeException e) {
            throw new Malformed("logs body is not envd's logs shape", e);
        }
    }

    static List<GuestProcess> processes(String text) throws Malformed {
        ListResponse.Builder builder = ListResponse.newBuilder();
        try {
            PROTO_JSON.merge(text, builder);
            List<GuestProcess> out = new ArrayList<>();
            for (ProcessInfo info : builder.getProcessesList()) {
                out.add(new GuestProcess(
                        info.getPid(),
                        info.hasTag() ? Optional.of(info.getTag()) : Optional.empty(),
                        info.getConfig().getCmd(),
                        info.getConfig().getArgsList(),
                        info.getConfig().getEnvsMap(),
                        info.getConfig().hasCwd() ? Optional.of(info.getConfig().getCwd()) : Optional.empty()));
            }
            return out;
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw new Malformed("process list body is not a process.ListResponse", e);
        }
    }

    /** The {@code message} of envd's error body ({@code {"code":..,"message":..}}), cut to 200 characters. */
    static String errorMessage(String text) {
        try {
            JsonNode message = JSON.readTree(text).get("message");
            if (message != null && message.isValueNode() && !message.isNull()) {
                String value = message.asText();
                return value.length() > 200 ? value.substring(0, 200) + "..." : value;
            }
        } catch (JsonProcessingException | RuntimeException ignored) {
            // not JSON: no message
        }
        return "";
    }
}
