package io.agentenv.images;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Turns a tool's stderr into a short message without credentials, and into the {@link ImageException} it means. */
final class ToolErrors {

    static final int MAX_MESSAGE = 2000;

    /** logrus's line format, as skopeo prints its fatal error. */
    private static final Pattern LOGRUS = Pattern.compile("time=\"[^\"]*\" level=\\w+ msg=\"((?:\\\\.|[^\"\\\\])*)\"");

    private static final List<String> AUTH = List.of(
            "unauthorized",
            "authentication required",
            "access to the resource is denied",
            "denied:",
            "invalid username/password",
            "unable to retrieve auth token",
            "status code: 401",
            "status code: 403",
            "401 unauthorized",
            "403 forbidden");
    private static final List<String> NOT_FOUND =
            List.of("manifest unknown", "name unknown", "repository name not known", "not found", "status code: 404");
    private static final List<String> UNREACHABLE = List.of(
            "pinging container registry",
            "connection refused",
            "no such host",
            "i/o timeout",
            "network is unreachable",
            "no route to host",
            "connection reset",
            "tls handshake",
            "x509:",
            "server gave http response to https client",
            "timeout awaiting response headers",
            "context deadline exceeded");

    private ToolErrors() {}

    /** stderr as one readable, trimmed message: logrus lines reduced to their text, secrets replaced by {@code ***}. */
    static String clean(String stderr, Collection<String> secrets) {
        List<String> lines = new ArrayList<>();
        for (String line : stderr.split("\n")) {
            Matcher m = LOGRUS.matcher(line);
            String text = m.find() ? m.group(1).replace("\\\"", "\"").replace("\\\\", "\\") : line;
            text = text.strip();
            if (!text.isEmpty()) {
                lines.add(text);
            }
        }
        String message = redact(String.join("; ", lines), secrets);
        if (message.length() > MAX_MESSAGE) {
            message = "..." + message.substring(message.length() - MAX_MESSAGE);
        }
        return message;
    }

    /** {@code text} with every secret, and the base64 forms registries and auth files carry, replaced. */
    static String redact(String text, Collection<String> secrets) {
        String out = text;
        for (String secret : secrets) {
            if (secret.isEmpty()) {
                continue;
            }
            out = out.replace(secret, "***");
            out = out.replace(Base64.getEncoder().encodeToString(secret.getBytes(StandardCharsets.UTF_8)), "***");
        }
        return out;
    }

    /** The failure a tool's cleaned message describes; {@code what} says what was being done, for the message. */
    static ImageException classify(String what, String message) {
        String lower = message.toLowerCase(Locale.ROOT);
        String full = what + ": " + (message.isEmpty() ? "no error output" : message);
        if (containsAny(lower, AUTH)) {
            return new ImageException.AuthFailed(full);
        }
        if (containsAny(lower, NOT_FOUND)) {
            return new ImageException.NotFound(full);
        }
        if (containsAny(lower, UNREACHABLE)) {
            return new ImageException.Unreachable(full);
        }
        if (lower.contains("no image found in manifest list") || lower.contains("unsupported manifest type")) {
            return new ImageException.Unsupported(full);
        }
        return new ImageException.Failed(full);
    }

    private static boolean containsAny(String text, List<String> needles) {
        for (String needle : needles) {
            if (text.contains(needle)) {
                return true;
            }
        }
        return false;
    }
}
