package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/** Writes a {@link ProxyProblem} as {@code {"code":<status>,"message":...[,"sandboxId":...]}}. */
public final class ProblemReply {
    private ProblemReply() {}

    public static void write(Response response, Callback callback, ProxyProblem problem) {
        StringBuilder json = new StringBuilder(96)
                .append("{\"code\":")
                .append(problem.status())
                .append(",\"message\":\"");
        escape(problem.getMessage(), json);
        json.append('"');
        problem.sandboxId().ifPresent(id -> {
            json.append(",\"sandboxId\":\"");
            escape(id, json);
            json.append('"');
        });
        json.append('}');
        byte[] body = json.toString().getBytes(UTF_8);
        response.setStatus(problem.status());
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    /** JSON string escaping (quotes, backslashes, control characters). */
    static void escape(String text, StringBuilder out) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
    }
}
