package io.agentenv.envd.http;

import com.google.gson.stream.JsonWriter;
import io.agentenv.envd.protocol.rest.EntryInfo;
import io.agentenv.envd.protocol.rest.ErrorBody;
import io.agentenv.envd.protocol.rest.LogEntry;
import io.agentenv.envd.protocol.rest.LogPage;
import io.agentenv.envd.protocol.rest.Metrics;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * envd's serialiser of its REST payloads (agentenv-envd-protocol's {@code rest} records), on gson's streaming writer
 * so that envd needs no other JSON library: compact, fields in the records' component order, null fields left out, no
 * HTML escaping. The host reads the same records with Jackson; agentenv-envd-client's round-trip tests pin the bytes.
 */
public final class RestJson {
    private RestJson() {}

    public static String metrics(Metrics m) {
        return write(json -> {
            json.beginObject();
            json.name("ts").value(m.ts());
            json.name("cpu_count").value(m.cpuCount());
            json.name("cpu_used_pct").value(m.cpuUsedPct());
            json.name("mem_total").value(m.memTotal());
            json.name("mem_used").value(m.memUsed());
            json.name("mem_cache").value(m.memCache());
            json.name("mem_total_mib").value(m.memTotalMib());
            json.name("mem_used_mib").value(m.memUsedMib());
            json.name("disk_used").value(m.diskUsed());
            json.name("disk_total").value(m.diskTotal());
            json.endObject();
        });
    }

    public static String logPage(LogPage page) {
        return write(json -> {
            json.beginObject();
            json.name("entries").beginArray();
            for (LogEntry e : page.entries()) {
                logEntry(json, e);
            }
            json.endArray();
            json.name("nextCursor").value(page.nextCursor());
            json.name("firstAvailable").value(page.firstAvailable());
            json.endObject();
        });
    }

    /** One entry alone, as a line of envd's journal file holds it. */
    public static String logEntry(LogEntry entry) {
        return write(json -> logEntry(json, entry));
    }

    /** The {@code POST /files} answer: a JSON array of entries. */
    public static String entries(List<EntryInfo> entries) {
        return write(json -> {
            json.beginArray();
            for (EntryInfo e : entries) {
                json.beginObject();
                json.name("path").value(e.path());
                json.name("name").value(e.name());
                json.name("type").value(e.type());
                if (e.metadata() != null) {
                    json.name("metadata").beginObject();
                    for (Map.Entry<String, String> m : e.metadata().entrySet()) {
                        json.name(m.getKey()).value(m.getValue());
                    }
                    json.endObject();
                }
                json.endObject();
            }
            json.endArray();
        });
    }

    public static String error(ErrorBody error) {
        return write(json -> {
            json.beginObject();
            json.name("code").value(error.code());
            json.name("message").value(error.message());
            json.endObject();
        });
    }

    private static void logEntry(JsonWriter json, LogEntry e) throws IOException {
        json.beginObject();
        json.name("seq").value(e.seq());
        json.name("timestamp").value(e.timestamp());
        json.name("source").value(e.source());
        json.name("level").value(e.level());
        if (e.pid() != null) {
            json.name("pid").value(e.pid().intValue());
        }
        json.name("stream").value(e.stream());
        json.name("message").value(e.message());
        json.endObject();
    }

    private interface Body {
        void write(JsonWriter json) throws IOException;
    }

    private static String write(Body body) {
        StringWriter text = new StringWriter(128);
        try (JsonWriter json = new JsonWriter(text)) {
            json.setHtmlSafe(false);
            body.write(json);
        } catch (IOException impossible) {
            throw new UncheckedIOException(impossible); // a StringWriter does not fail
        }
        return text.toString();
    }
}
