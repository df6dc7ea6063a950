package io.agentenv.envd.http;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;

/** Blocking writers for complete HTTP responses. */
public final class Responses {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    private Responses() {}

    public static void noContent(Response response) throws IOException {
        response.setStatus(204);
        try (OutputStream out = Content.Sink.asOutputStream(response)) {
            out.flush();
        }
    }

    public static void json(Response response, int status, JsonElement body) throws IOException {
        bytes(response, status, "application/json", GSON.toJson(body).getBytes(StandardCharsets.UTF_8));
    }

    public static void bytes(Response response, int status, String contentType, byte[] body) throws IOException {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        try (OutputStream out = Content.Sink.asOutputStream(response)) {
            out.write(body);
        }
    }

    /** {@code {"code":<status>,"message":"..."}} */
    public static void error(Response response, int status, String message) throws IOException {
        JsonObject body = new JsonObject();
        body.addProperty("code", status);
        body.addProperty("message", message);
        json(response, status, body);
    }
}
