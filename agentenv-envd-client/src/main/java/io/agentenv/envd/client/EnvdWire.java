package io.agentenv.envd.client;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.protocol.process.ProcessInfo;
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
 * JSON) in. A body that does not have the expected shape is a {@link Malformed}, with a message that names the field
 * but never echoes the body.
 */
final class EnvdWire {
    private static final JsonFormat.Parser PROTO_JSON = JsonFormat.parser().ignoringUnknownFields();

    /** The answer could not be read. */
    static final class Malformed extends Exception {
        Malformed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private EnvdWire() {}

    static String init(EnvdInit init) {
        JsonObject body = new JsonObject();
        init.accessToken().ifPresent(t -> body.addProperty("accessToken", t.value()));
        JsonObject env = new JsonObject();
        init.envVars().forEach(env::addProperty);
        body.add("envVars", env);
        init.defaultUser().ifPresent(u -> body.addProperty("defaultUser", u));
        init.defaultWorkdir().ifPresent(w -> body.addProperty("defaultWorkdir", w));
        body.addProperty("timestamp", init.timestamp().toString());
        return body.toString();
    }

    static EnvdMetrics metrics(String text) throws Malformed {
        try {
            JsonObject json = object(text);
            return new EnvdMetrics(Instant.ofEpochSecond(json.get("ts").getAsLong()), json.get("cpu_count").getAsInt(),
                    json.get("cpu_used_pct").getAsDouble(), json.get("mem_used").getAsLong(),
                    json.get("mem_total").getAsLong(), optionalLong(json, "mem_cache"),
                    json.get("disk_used").getAsLong(), json.get("disk_total").getAsLong());
        } catch (RuntimeException e) {
            throw new Malformed("metrics body is not envd's metrics shape", e);
        }
    }

    static EnvdLogPage logs(String text) throws Malformed {
        try {
            JsonObject json = object(text);
            JsonArray entries = json.getAsJsonArray("entries");
            List<EnvdLogEntry> out = new ArrayList<>(entries.size());
            for (JsonElement element : entries) {
                JsonObject e = element.getAsJsonObject();
                JsonElement pid = e.get("pid");
                out.add(new EnvdLogEntry(e.get("seq").getAsLong(), Instant.parse(e.get("timestamp").getAsString()),
                        EnvdLogEntry.Source.valueOf(e.get("source").getAsString().toUpperCase(Locale.ROOT)),
                        e.get("level").getAsString(),
                        pid == null || pid.isJsonNull() ? OptionalInt.empty() : OptionalInt.of(pid.getAsInt()),
                        e.get("stream").getAsString(), e.get("message").getAsString()));
            }
            return new EnvdLogPage(out, json.get("nextCursor").getAsLong(), json.get("firstAvailable").getAsLong());
        } catch (RuntimeException e) {
            throw new Malformed("logs body is not envd's logs shape", e);
        }
    }

    static List<GuestProcess> processes(String text) throws Malformed {
        ListResponse.Builder builder = ListResponse.newBuilder();
        try {
            PROTO_JSON.merge(text, builder);
            List<GuestProcess> out = new ArrayList<>();
            for (ProcessInfo info : builder.getProcessesList()) {
                out.add(new GuestProcess(info.getPid(), info.hasTag() ? Optional.of(info.getTag()) : Optional.empty(),
                        info.getConfig().getCmd(), info.getConfig().getArgsList(), info.getConfig().getEnvsMap(),
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
            JsonElement message = object(text).get("message");
            if (message != null && message.isJsonPrimitive()) {
                String value = message.getAsString();
                return value.length() > 200 ? value.substring(0, 200) + "..." : value;
            }
        } catch (RuntimeException ignored) {
            // not JSON: no message
        }
        return "";
    }

    private static long optionalLong(JsonObject json, String name) {
        JsonElement value = json.get(name);
        return value == null || value.isJsonNull() ? 0 : value.getAsLong();
    }

    private static JsonObject object(String text) {
        return JsonParser.parseString(text).getAsJsonObject();
    }
}
