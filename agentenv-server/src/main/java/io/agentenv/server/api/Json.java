package io.agentenv.server.api;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.agentenv.orchestrator.AgentEnvException;
import java.io.IOException;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * JSON reading and writing for the API. Reading is strict about types (no string-to-number coercion, no float-to-int
 * truncation, no duplicate keys) and lenient about unknown fields; every failure becomes INVALID_ARGUMENT with a
 * message that names the field. The gateway reads the node routes' bodies with it too, so both answer bad JSON alike.
 */
public final class Json {
    private static final int MAX_DETAIL = 200;

    private final ObjectMapper mapper = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .withCoercionConfig(
                    LogicalType.Textual,
                    c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                            .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                            .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
            .build();

    /**
     * Parses a request body; an empty body is read as {@code {}} when {@code emptyAllowed}, else rejected.
     *
     * @throws AgentEnvException INVALID_ARGUMENT, with a message for the client, when the body is not a {@code type}
     */
    public <T> T read(byte[] body, Class<T> type, boolean emptyAllowed) {
        if (isBlank(body)) {
            if (!emptyAllowed) {
                throw AgentEnvException.invalidArgument("request body is required");
            }
            body = new byte[] {'{', '}'};
        }
        try {
            T value = mapper.readValue(body, type);
            if (value == null) { // the body was JSON null
                throw AgentEnvException.invalidArgument("request body must be a JSON object");
            }
            return value;
        } catch (ValueInstantiationException e) {
            Throwable cause = e.getCause();
            String detail = cause instanceof IllegalArgumentException && cause.getMessage() != null
                    ? cause.getMessage()
                    : "invalid value";
            throw AgentEnvException.invalidArgument("invalid request body: " + clip(detail));
        } catch (MismatchedInputException e) {
            if (e.getOriginalMessage() != null && e.getOriginalMessage().startsWith("Trailing token")) {
                throw AgentEnvException.invalidArgument("malformed JSON body: more after the JSON value");
            }
            String field = fieldPath(e);
            if (field.isEmpty()) {
                throw AgentEnvException.invalidArgument("request body must be a JSON object");
            }
            String expected = e.getTargetType() == null ? "another type" : describe(e.getTargetType());
            throw AgentEnvException.invalidArgument("invalid value for field '" + field + "': expected " + expected);
        } catch (JsonProcessingException e) {
            throw AgentEnvException.invalidArgument("malformed JSON body: " + clip(e.getOriginalMessage()));
        } catch (IOException e) {
            throw AgentEnvException.invalidArgument("unreadable request body");
        }
    }

    /** Parses a body that must be a JSON object and returns it re-serialised (canonical, compact). */
    String readObjectText(byte[] body) {
        @SuppressWarnings("unchecked")
        Map<String, Object> object = read(body, Map.class, false);
        return write(object);
    }

    String write(Object value) {
        try {
            return mapper.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }

    public byte[] writeBytes(Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }

    /** Reads stored JSON object text back (for example custom extension params) into a map. */
    Map<String, Object> readStoredObject(String text) {
        try {
            return mapper.readValue(text, new com.fasterxml.jackson.core.type.TypeReference<Map<String, Object>>() {});
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored JSON is not an object", e);
        }
    }

    private static String fieldPath(JsonMappingException e) {
        return e.getPath().stream()
                .map(ref -> ref.getFieldName() != null ? ref.getFieldName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining("."))
                .replace(".[", "[");
    }

    private static String describe(Class<?> type) {
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
            return "an integer";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "a boolean";
        }
        if (type == String.class) {
            return "a string";
        }
        if (Map.class.isAssignableFrom(type) || type.isRecord()) {
            return "an object";
        }
        if (java.util.Collection.class.isAssignableFrom(type)) {
            return "an array";
        }
        return type.getSimpleName();
    }

    private static boolean isBlank(byte[] body) {
        for (byte b : body) {
            if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
                return false;
            }
        }
        return true;
    }

    private static String clip(String s) {
        if (s == null) {
            return "";
        }
        return s.length() <= MAX_DETAIL ? s : s.substring(0, MAX_DETAIL) + "...";
    }
}
