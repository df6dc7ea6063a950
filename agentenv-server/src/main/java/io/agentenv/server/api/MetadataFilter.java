package io.agentenv.server.api;

import io.agentenv.orchestrator.AgentEnvException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Decodes the {@code metadata} list filter the way E2B's infra does ({@code utils.ParseMetadata}). The SDK encodes
 * each key and value with {@code encodeURIComponent}, joins them with {@code URLSearchParams} and the HTTP client
 * encodes the whole string again, so after the server's normal query decoding one value looks like
 * {@code a=b%2520c}: unescape the whole string once, split on {@code &} and {@code =}, then unescape each key and
 * value ({@code {a: "b c"}}).
 */
final class MetadataFilter {
    private MetadataFilter() {}

    static Map<String, String> decode(String once) {
        Map<String, String> pairs = new LinkedHashMap<>();
        if (once.isBlank()) {
            return pairs;
        }
        String twice = unescape(once);
        for (String pair : twice.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw AgentEnvException.invalidArgument("metadata filter must be key=value pairs joined with '&'");
            }
            String key = unescape(pair.substring(0, eq));
            String value = unescape(pair.substring(eq + 1));
            if (pairs.putIfAbsent(key, value) != null && !pairs.get(key).equals(value)) {
                throw AgentEnvException.invalidArgument("metadata filter names key '" + key + "' twice");
            }
        }
        return pairs;
    }

    private static String unescape(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw AgentEnvException.invalidArgument("metadata filter is not valid URL encoding");
        }
    }
}
