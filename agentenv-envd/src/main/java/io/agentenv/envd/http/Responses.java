package io.agentenv.envd.http;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import io.agentenv.envd.protocol.rest.ErrorBody;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** Blocking writers for complete HTTP responses. */
public final class Responses {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    private Responses() {}

    public static void noContent(EnvdResponse response) throws IOException {
        response.sendEmpty(204);
    }

    public static void json(EnvdResponse response, int status, JsonElement body) throws IOException {
        json(response, status, GSON.toJson(body));
    }

    /** A body written by {@link RestJson}. */
    public static void json(EnvdResponse response, int status, String body) throws IOException {
        response.send(status, "application/json", body.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code {"code":<status>,"message":"..."}} */
    public static void error(EnvdResponse response, int status, String message) throws IOException {
        json(response, status, RestJson.error(new ErrorBody(status, message)));
    }
}
