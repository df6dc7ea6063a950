package io.agentenv.backend.container.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.backend.container.host.CommandFailedException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** What runc's JSON log and CRIU's log say about a failure, read from their bounded tails. */
public final class RuncLogs {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int LOG_TAIL_BYTES = 256 * 1024;

    private RuncLogs() {}

    /** The error and fatal messages of a runc JSON log. */
    static String errorsFrom(Path logFile) {
        try {
            if (!Files.exists(logFile)) {
                return "";
            }
            StringBuilder errors = new StringBuilder();
            for (String line : tailLines(logFile, LOG_TAIL_BYTES)) {
                try {
                    JsonNode entry = JSON.readTree(line);
                    String level = entry.path("level").asText();
                    if (level.equals("error") || level.equals("fatal")) {
                        errors.append(entry.path("msg").asText()).append('\n');
                    }
                } catch (IOException notJson) {
                    errors.append(line).append('\n');
                }
            }
            return errors.toString();
        } catch (IOException e) {
            return "(runc log unreadable: " + e.getMessage() + ")";
        }
    }

    /**
     * The last lines within the last {@code maxBytes} of a log (the first, possibly cut, line dropped when the log is
     * longer): a restore from a damaged image can make CRIU write hundreds of MiB of log before its deadline.
     */
    public static List<String> tailLines(Path logFile, int maxBytes) throws IOException {
        try (SeekableByteChannel channel = Files.newByteChannel(logFile)) {
            long size = channel.size();
            ByteBuffer tail = ByteBuffer.allocate((int) Math.min(size, maxBytes));
            channel.position(size - tail.capacity());
            while (tail.hasRemaining() && channel.read(tail) > 0) {
                // fill
            }
            List<String> lines = new ArrayList<>(new String(tail.array(), 0, tail.position(), StandardCharsets.UTF_8)
                    .lines()
                    .toList());
            if (size > tail.capacity() && !lines.isEmpty()) {
                lines.removeFirst();
            }
            return lines;
        }
    }

    /** CRIU explains its failures in its own log; add that log's error lines to runc's message. */
    static CommandFailedException withCriuLog(CommandFailedException e, Path criuLog) {
        StringBuilder detail = new StringBuilder(e.stderrTail());
        try {
            if (Files.exists(criuLog)) {
                List<String> errors = tailLines(criuLog, LOG_TAIL_BYTES).stream()
                        .filter(l -> l.contains("Error") || l.contains("error"))
                        .toList();
                errors.subList(Math.max(0, errors.size() - 20), errors.size())
                        .forEach(l -> detail.append('\n').append(l));
            }
        } catch (IOException ignored) {
            // the runc message alone still says what failed
        }
        return new CommandFailedException(e.reason(), e.argv(), e.exitCode(), detail.toString(), e);
    }
}
