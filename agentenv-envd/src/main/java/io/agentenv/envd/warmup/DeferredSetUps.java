package io.agentenv.envd.warmup;

import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * envd's two slow one-time set-ups, off the path to its first answers: protobuf's JSON parser with its well-known types
 * (class initialisers whose results live in static fields of library classes, which the AOT cache cannot keep; the
 * first RPC needs them, and class initialisation is thread-safe, so an RPC that comes first just does or waits for
 * what it needs) and the process launcher's native spawn (until it is ready, processes start through the JDK).
 *
 * <p>Both start {@link #AFTER_FIRST_REQUESTS} after envd serves, not at once: on 2 cores, the ~100 ms of CPU they
 * take (with the JIT work they cause) competed with the first requests (measured with {@code
 * bench/envd/startup-phases.mjs}: first {@code /health} 204 at 145 ms median with them started at once, 127 with them
 * 100 ms later; first {@code Start} answered 213 vs 177). The host checkpoints an envd only after {@code GET /ready},
 * which waits for both, so restored copies never redo them.
 */
public final class DeferredSetUps {
    /** How long after envd serves the set-ups start. */
    public static final Duration AFTER_FIRST_REQUESTS = Duration.ofMillis(150);

    private DeferredSetUps() {}

    /**
     * On a background thread: waits {@code after}, starts {@code nativeSpawnSetUp} (which runs on its own thread), runs
     * the JSON warm-up and completes {@code done} when it ends.
     */
    public static void startInBackground(Duration after, CompletableFuture<Void> done, Runnable nativeSpawnSetUp) {
        Thread.ofPlatform().name("envd-warmup").daemon().start(() -> {
            try {
                Thread.sleep(after);
            } catch (InterruptedException e) { // only at exit: nothing left to set up
                done.completeExceptionally(e);
                return;
            }
            try {
                nativeSpawnSetUp.run();
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
