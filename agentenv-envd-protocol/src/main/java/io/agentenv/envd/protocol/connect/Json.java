package io.agentenv.envd.protocol.connect;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import java.nio.charset.StandardCharsets;

/**
 * Compact proto3 JSON printing shared by the codec. JsonFormat stays here because the Connect JSON codec needs the
 * proto3 JSON mapping; envd's REST payloads do not go through it (see the {@code rest} package).
 */
final class Json {
    private static final JsonFormat.Printer PRINTER = JsonFormat.printer().omittingInsignificantWhitespace();

    private Json() {}

    static byte[] print(MessageOrBuilder message) {
        try {
            return PRINTER.print(message).getBytes(StandardCharsets.UTF_8);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(
                    "message cannot be printed as JSON: " + message.getClass().getName(), e);
        }
    }
}
