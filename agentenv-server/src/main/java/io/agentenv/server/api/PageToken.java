package io.agentenv.server.api;

import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.Cursor;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * The opaque {@code nextToken}: base64url (no padding) of {@code "<RFC 3339 instant, nanosecond precision>__<id>"},
 * the keyset position of the last item of the previous page. Tokens that do not decode are a 400.
 */
final class PageToken {
    private static final String SEPARATOR = "__";
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_.-]{1,128}");
    private static final int MAX_TOKEN_LENGTH = 512;

    private PageToken() {}

    static String encode(Cursor cursor) {
        String plain = cursor.at().toString() + SEPARATOR + cursor.id();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(plain.getBytes(StandardCharsets.UTF_8));
    }

    static Cursor decode(String token) {
        if (token.length() > MAX_TOKEN_LENGTH) {
            throw invalid();
        }
        String plain;
        try {
            plain = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw invalid();
        }
        int at = plain.indexOf(SEPARATOR);
        if (at <= 0) {
            throw invalid();
        }
        String id = plain.substring(at + SEPARATOR.length());
        if (!ID.matcher(id).matches()) {
            throw invalid();
        }
        try {
            return new Cursor(Instant.parse(plain.substring(0, at)), id);
        } catch (DateTimeParseException e) {
            throw invalid();
        }
    }

    private static AgentEnvException invalid() {
        return AgentEnvException.invalidArgument("invalid nextToken");
    }
}
