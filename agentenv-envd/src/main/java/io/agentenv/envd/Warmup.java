package io.agentenv.envd;

import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Start-up work moved off the critical path: run on a second core while {@code main} wires envd. The class initialisers
 * it triggers are the expensive ones the AOT cache cannot keep (their results live in static fields of library classes):
 * the JDK's list of available locales (Jetty's MimeTypes asks for it) and protobuf's JSON parser with its well-known
 * types (the first RPC needs it). Class initialisation is thread-safe, so whoever comes second just waits.
 */
final class Warmup {
    private Warmup() {}

    static void startInBackground() {
        Thread.ofPlatform().name("envd-warmup").daemon().start(Warmup::run);
    }

    private static void run() {
        Locale.getAvailableLocales();
        byte[] request = "{\"process\":{\"cmd\":\"/bin/true\"},\"stdin\":false}".getBytes(StandardCharsets.UTF_8);
        WireFormat.JSON.parse(request, StartRequest.getDefaultInstance());
        WireFormat.JSON.serialize(StartResponse.getDefaultInstance());
    }
}
