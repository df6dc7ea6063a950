package io.agentenv.envd.protocol.connect;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The last frame of every Connect stream (flag 0x02): {@code {"error"?:{code,message},"metadata"?:{"k":["v"]}}}.
 * It is JSON for both the JSON and the binary proto variants of the protocol.
 */
public record EndStream(Optional<RpcException> error, Map<String, List<String>> metadata) {
    public EndStream {
        requireNonNull(error, "error is null");
        metadata = Map.copyOf(metadata);
    }

    public static EndStream ok() {
        return new EndStream(Optional.empty(), Map.of());
    }

    public static EndStream failed(RpcException error) {
        return new EndStream(Optional.of(error), Map.of());
    }

    public byte[] toJson() {
        // Connect's end-stream JSON, read as a protobuf Struct: this module is shared with envd, which has no Jackson
        Struct.Builder root = Struct.newBuilder();
        error.ifPresent(e -> root.putFields(
                "error", Value.newBuilder().setStructValue(e.toStruct()).build()));
        if (!metadata.isEmpty()) {
            Struct.Builder meta = Struct.newBuilder();
            metadata.forEach((key, values) -> {
                ListValue.Builder list = ListValue.newBuilder();
                values.forEach(v -> list.addValues(Value.newBuilder().setStringValue(v)));
                meta.putFields(key, Value.newBuilder().setListValue(list).build());
            });
            root.putFields("metadata", Value.newBuilder().setStructValue(meta).build());
        }
        return Json.print(root);
    }

    public Envelope toEnvelope() {
        return Envelope.endStream(toJson());
    }

    /** Parses an end-stream payload as a client would. */
    public static EndStream parse(byte[] json) {
        Struct.Builder root = Struct.newBuilder();
        try {
            JsonFormat.parser().merge(new String(json, StandardCharsets.UTF_8), root);
        } catch (InvalidProtocolBufferException e) {
            throw RpcException.invalidArgument("invalid end stream: " + e.getMessage());
        }
        Optional<RpcException> error = Optional.ofNullable(root.getFieldsMap().get("error"))
                .map(v -> RpcException.fromStruct(v.getStructValue()));
        Map<String, List<String>> metadata = new LinkedHashMap<>();
        Value meta = root.getFieldsMap().get("metadata");
        if (meta != null) {
            meta.getStructValue()
                    .getFieldsMap()
                    .forEach((k, v) -> metadata.put(
                            k,
                            v.getListValue().getValuesList().stream()
                                    .map(Value::getStringValue)
                                    .toList()));
        }
        return new EndStream(error, metadata);
    }
}
