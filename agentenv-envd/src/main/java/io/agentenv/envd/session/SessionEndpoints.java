package io.agentenv.envd.session;

import static java.util.Objects.requireNonNull;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.agentenv.envd.http.Access;
import io.agentenv.envd.http.EnvdHandler;
import io.agentenv.envd.http.EnvdRequest;
import io.agentenv.envd.http.EnvdResponse;
import io.agentenv.envd.http.HttpException;
import io.agentenv.envd.http.HttpRoutes;
import io.agentenv.envd.http.Responses;
import io.agentenv.envd.protocol.rest.InitBody;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** {@code POST /init}, {@code GET /envs} and {@code GET /health}. */
public final class SessionEndpoints {
    private static final int MAX_INIT_BYTES = 1 << 20;

    private final Session session;
    private final Runnable afterInit;

    public SessionEndpoints(Session session) {
        this(session, () -> {});
    }

    /**
     * @param afterInit run after each accepted init, before it is answered (envd's journal readies its file there:
     *                  {@code LogJournal#prepareFile})
     */
    public SessionEndpoints(Session session, Runnable afterInit) {
        this.session = requireNonNull(session, "session is null");
        this.afterInit = requireNonNull(afterInit, "afterInit is null");
    }

    /**
     * /init checks access itself: the first call (no token yet) is open; once a token is set, only a caller that knows
     * it may re-initialise, by sending it in {@code X-Access-Token} or as the body's {@code accessToken} (a resume that
     * repeats the same token). Otherwise any sandboxed program could replace the token or the default user.
     */
    public void register(HttpRoutes routes) {
        routes.add("GET", "/health", Access.PUBLIC, (request, response) -> Responses.noContent(response))
                .add("POST", "/init", Access.SELF_CHECKED, this::init)
                .add("GET", "/envs", Access.TOKEN, this::envs);
    }

    private void init(EnvdRequest request, EnvdResponse response) throws Exception {
        InputStream in = request.body();
        byte[] body = in.readNBytes(MAX_INIT_BYTES + 1);
        if (body.length > MAX_INIT_BYTES) {
            throw new HttpException(413, "init body is larger than " + MAX_INIT_BYTES + " bytes");
        }
        InitRequest init = parse(new String(body, StandardCharsets.UTF_8));
        boolean knowsToken = session.isAuthorized(request.header(EnvdHandler.ACCESS_TOKEN_HEADER))
                || init.accessToken().filter(session::isAuthorized).isPresent();
        if (!knowsToken) {
            throw HttpException.unauthorized("unauthorized access, please provide a valid access token");
        }
        try {
            session.init(init);
        } catch (IllegalArgumentException e) {
            throw HttpException.badRequest(e.getMessage());
        }
        afterInit.run();
        Responses.noContent(response);
    }

    static InitRequest parse(String text) {
        if (text.isBlank()) {
            return new InitRequest(Optional.empty(), Map.of(), Optional.empty(), Optional.empty(), Optional.empty());
        }
        JsonObject json;
        try {
            JsonElement element = JsonParser.parseString(text);
            if (!element.isJsonObject()) {
                throw HttpException.badRequest("init body must be a JSON object");
            }
            json = element.getAsJsonObject();
        } catch (JsonParseException e) {
            throw HttpException.badRequest("init body is not valid JSON");
        }
        Map<String, String> envVars = new HashMap<>();
        JsonElement env = json.get("envVars");
        if (env != null && !env.isJsonNull()) {
            if (!env.isJsonObject()) {
                throw HttpException.badRequest("envVars must be an object of strings");
            }
            for (Map.Entry<String, JsonElement> e : env.getAsJsonObject().entrySet()) {
                if (!e.getValue().isJsonPrimitive()
                        || !e.getValue().getAsJsonPrimitive().isString()) {
                    throw HttpException.badRequest("envVars." + e.getKey() + " must be a string");
                }
                envVars.put(e.getKey(), e.getValue().getAsString());
            }
        }
        InitBody body = new InitBody(
                string(json, "accessToken").orElse(null),
                envVars,
                string(json, "defaultUser").orElse(null),
                string(json, "defaultWorkdir").orElse(null),
                string(json, "timestamp").orElse(null));
        try {
            return InitRequest.from(body);
        } catch (DateTimeParseException e) {
            throw HttpException.badRequest("timestamp must be an RFC 3339 date-time");
        }
    }

    private static Optional<String> string(JsonObject json, String name) {
        JsonElement value = json.get(name);
        if (value == null || value.isJsonNull()) {
            return Optional.empty();
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw HttpException.badRequest(name + " must be a string");
        }
        return Optional.of(value.getAsString());
    }

    private void envs(EnvdRequest request, EnvdResponse response) throws Exception {
        JsonObject body = new JsonObject();
        session.current().envVars().forEach(body::addProperty);
        Responses.json(response, 200, body);
    }
}
