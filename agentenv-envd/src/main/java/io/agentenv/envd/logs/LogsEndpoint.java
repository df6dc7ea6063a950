package io.agentenv.envd.logs;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.http.EnvdRequest;
import io.agentenv.envd.http.EnvdResponse;
import io.agentenv.envd.http.HttpEndpoint;
import io.agentenv.envd.http.HttpException;
import io.agentenv.envd.http.Responses;
import io.agentenv.envd.http.RestJson;
import io.agentenv.envd.protocol.rest.LogPage;
import java.util.OptionalInt;

/**
 * {@code GET /logs?cursor=<seq>&limit=<n>&pid=<pid>}: envd's log and the process events/output, oldest first.
 * Response: {@code {"entries":[{"seq":1,"timestamp":"...","source":"envd|process","level":"INFO","pid":12?,
 * "stream":"stdout|stderr|pty|event|<logger>","message":"..."}],"nextCursor":N,"firstAvailable":M}}.
 */
public final class LogsEndpoint implements HttpEndpoint {
    private static final int MAX_LIMIT = 1000;

    private final LogJournal journal;

    public LogsEndpoint(LogJournal journal) {
        this.journal = requireNonNull(journal, "journal is null");
    }

    @Override
    public void handle(EnvdRequest request, EnvdResponse response) throws Exception {
        long cursor = number(request, "cursor", 0, 0, Long.MAX_VALUE);
        int limit = (int) number(request, "limit", MAX_LIMIT, 1, MAX_LIMIT);
        OptionalInt pid = request.query("pid").isEmpty()
                ? OptionalInt.empty()
                : OptionalInt.of((int) number(request, "pid", 0, 1, Integer.MAX_VALUE));
        LogJournal.Page page = journal.read(cursor, limit, pid);
        LogPage body = new LogPage(
                page.entries().stream().map(LogJournal.Entry::toWire).toList(),
                page.nextCursor(),
                page.firstAvailable());
        Responses.json(response, 200, RestJson.logPage(body));
    }

    private static long number(EnvdRequest request, String name, long fallback, long min, long max) {
        String value = request.query(name).orElse(null);
        if (value == null || value.isEmpty()) {
            return fallback;
        }
        try {
            long n = Long.parseLong(value);
            if (n < min || n > max) {
                throw HttpException.badRequest(name + " must be between " + min + " and " + max);
            }
            return n;
        } catch (NumberFormatException e) {
            throw HttpException.badRequest(name + " must be an integer");
        }
    }
}
