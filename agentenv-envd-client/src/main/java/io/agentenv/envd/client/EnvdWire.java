package io.agentenv.envd.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
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
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * envd's REST bodies, agentenv-envd-protocol's {@code rest} records read and written with Jackson (the host's one JSON
 * library): {@code /init} out; {@code /metrics}, {@code /logs}, {@code /files} and error bodies in; and the mapping
 * of {@code process.Process/List}'s answer to the SPI's records. A body that does not have the expected shape is a
 * {@link Malformed}, with a message that names the body but never echoes it.
 */
final class EnvdWire {
    /** The host's mapper of envd's REST records: unknown fields (a newer envd's) are ignored. */
    static final ObjectMapper JSON = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

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

    static EnvdMetrics metrics(byte[] text) throws Malformed {
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
        } catch (IOException | RuntimeException e) {
            throw new Malformed("metrics body is not envd's metrics shape", e);
        }
    }

    static EnvdLogPage logs(byte[] text) throws Malformed {
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
        } catch (IOException | RuntimeException e) {
            throw new Malformed("logs body is not envd's logs shape", e);
        }
    }

    static List<GuestProcess> processes(ListResponse list) {
        List<GuestProcess> out = new ArrayList<>();
        for (ProcessInfo info : list.getProcessesList()) {
            out.add(new GuestProcess(
                    info.getPid(),
                    info.hasTag() ? Optional.of(info.getTag()) : Optional.empty(),
                    info.getConfig().getCmd(),
                    info.getConfig().getArgsList(),
                    info.getConfig().getEnvsMap(),
                    info.getConfig().hasCwd() ? Optional.of(info.getConfig().getCwd()) : Optional.empty()));
        }
        return out;
    }
}
