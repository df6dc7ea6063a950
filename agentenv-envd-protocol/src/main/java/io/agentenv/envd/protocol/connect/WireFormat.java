package io.agentenv.envd.protocol.connect;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;

/** How messages are encoded: Connect's JSON (proto3 JSON mapping) or binary protobuf. */
public enum WireFormat {
    JSON("application/json", "application/connect+json"),
    PROTO("application/proto", "application/connect+proto");

    // The Connect JSON codec needs protobuf's proto3 JSON mapping (lowerCamel names, int64 as strings, enums by name,
    // bytes as base64), which only JsonFormat implements; envd's REST payloads are the rest records instead (Jackson on
    // the host, gson in envd).
    private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();

    private final String unaryContentType;
    private final String streamContentType;

    WireFormat(String unaryContentType, String streamContentType) {
        this.unaryContentType = unaryContentType;
        this.streamContentType = streamContentType;
    }

    public String unaryContentType() {
        return unaryContentType;
    }

    public String streamContentType() {
        return streamContentType;
    }

    /** The format named by a unary request's content type ({@code application/json; charset=utf-8} allowed). */
    public static Optional<WireFormat> ofUnary(String contentType) {
        return match(contentType, false);
    }

    /** The format named by a streaming request's content type. */
    public static Optional<WireFormat> ofStream(String contentType) {
        return match(contentType, true);
    }

    private static Optional<WireFormat> match(String contentType, boolean streaming) {
        if (contentType == null) {
            return Optional.empty();
        }
        String type = contentType.toLowerCase(Locale.ROOT);
        int semicolon = type.indexOf(';');
        if (semicolon >= 0) {
            String parameters = type.substring(semicolon + 1).replace(" ", "");
            if (!parameters.isEmpty() && !parameters.matches("charset=utf-?8")) {
                return Optional.empty();
            }
            type = type.substring(0, semicolon);
        }
        type = type.strip();
        for (WireFormat format : values()) {
            if (type.equals(streaming ? format.streamContentType : format.unaryContentType)) {
                return Optional.of(format);
            }
        }
        return Optional.empty();
    }

    /** Parses one message; malformed input is an {@code invalid_argument} error. */
    @SuppressWarnings("unchecked")
    public <T extends Message> T parse(byte[] bytes, T prototype) {
        try {
            return switch (this) {
                case PROTO -> (T) prototype.getParserForType().parseFrom(bytes);
                case JSON -> {
                    Message.Builder builder = prototype.newBuilderForType();
                    String text = new String(bytes, StandardCharsets.UTF_8);
                    if (!text.isBlank()) {
                        PARSER.merge(text, builder);
                    }
                    yield (T) builder.build();
                }
            };
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw new RpcException(
                    ConnectCode.INVALID_ARGUMENT,
                    "unmarshal into " + prototype.getDescriptorForType().getFullName() + ": "
                            + firstLine(e.getMessage()),
                    e);
        }
    }

    public byte[] serialize(MessageOrBuilder message) {
        return switch (this) {
            case PROTO ->
                message instanceof Message m
                        ? m.toByteArray()
                        : ((Message.Builder) message).build().toByteArray();
            case JSON -> Json.print(message);
        };
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "malformed message";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }
}
