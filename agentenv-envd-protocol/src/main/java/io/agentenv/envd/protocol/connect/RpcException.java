package io.agentenv.envd.protocol.connect;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import java.nio.charset.StandardCharsets;

/**
 * A Connect error. The message is sent to the client as is, so it must never carry secrets or internal details.
 */
public final class RpcException extends RuntimeException {
    private final ConnectCode code;

    public RpcException(ConnectCode code, String message) {
        this(code, message, null);
    }

    public RpcException(ConnectCode code, String message, Throwable cause) {
        super(requireNonNull(message, "message is null"), cause);
        this.code = requireNonNull(code, "code is null");
    }

    public ConnectCode code() {
        return code;
    }

    public static RpcException invalidArgument(String message) {
        return new RpcException(ConnectCode.INVALID_ARGUMENT, message);
    }

    public static RpcException notFound(String message) {
        return new RpcException(ConnectCode.NOT_FOUND, message);
    }

    public static RpcException internal(String message, Throwable cause) {
        return new RpcException(ConnectCode.INTERNAL, message, cause);
    }

    /** The error object: {@code {"code":"not_found","message":"..."}}. */
    Struct toStruct() {
        return Struct.newBuilder()
                .putFields(
                        "code",
                        Value.newBuilder().setStringValue(code.wireName()).build())
                .putFields(
                        "message",
                        Value.newBuilder().setStringValue(getMessage()).build())
                .build();
    }

    /** The body of a unary error response. */
    public byte[] toJson() {
        return Json.print(toStruct());
    }

    /** Reads an error object; an unknown or missing code becomes {@code unknown}. */
    static RpcException fromStruct(Struct error) {
        String name =
                error.getFieldsOrDefault("code", Value.getDefaultInstance()).getStringValue();
        String message =
                error.getFieldsOrDefault("message", Value.getDefaultInstance()).getStringValue();
        return new RpcException(ConnectCode.fromWireName(name).orElse(ConnectCode.UNKNOWN), message);
    }

    /** Parses a unary error body, falling back to the code implied by the HTTP status. */
    public static RpcException fromUnaryResponse(int httpStatus, byte[] body) {
        try {
            // Connect's error JSON, read as a protobuf Struct: this module is shared with envd, which has no Jackson
            Struct.Builder error = Struct.newBuilder();
            JsonFormat.parser().ignoringUnknownFields().merge(new String(body, StandardCharsets.UTF_8), error);
            if (error.containsFields("code")) {
                return fromStruct(error.build());
            }
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            // not a Connect error body: use the status
        }
        return new RpcException(ConnectCode.fromHttpStatus(httpStatus), "HTTP " + httpStatus);
    }
}
