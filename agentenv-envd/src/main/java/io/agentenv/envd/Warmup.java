package io.agentenv.envd;

import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * Start-up work moved off the critical path: run on a background thread once envd listens (started earlier, it
 * competed with the wiring for the CPU and for class-initialisation locks). The
 * class initialisers it triggers are the expensive ones the AOT cache cannot keep (their results live in static fields
 * of library classes): protobuf's JSON parser with its well-known types (the first RPC needs it). Class initialisation
 * is thread-safe, so a request that comes first just waits for it.
 */
final class Warmup {
    private Warmup() {}

    /** Runs the warm-up on a background thread and completes {@code done} when it ends. */
    static void startInBackground(CompletableFuture<Void> done) {
        Thread.ofPlatform().name("envd-warmup").daemon().start(() -> {
            try {
                run();
                done.complete(null);
            } catch (RuntimeException | Error e) {
                done.completeExceptionally(e);
            }
        });
    }

    private static void run() {
        byte[] request = "{\"process\":{\"cmd\":\"/bin/true\"},\"stdin\":false}".getBytes(StandardCharsets.UTF_8);
        WireFormat.JSON.parse(request, StartRequest.getDefaultInstance());
        WireFormat.JSON.serialize(StartResponse.getDefaultInstance());
    }
}
