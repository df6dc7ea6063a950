package io.agentenv.server.container;

import io.agentenv.envd.client.EnvdAddress;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.client.EnvdClientSettings;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.SandboxId;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs commands in a sandbox through its envd ({@code process.Process/Start}, with the envd client the backends use)
 * as the SDK's {@code commands.run} does, as user {@code user}.
 */
final class GuestCommands {
    private static final EnvdClients CLIENTS = new EnvdClients(EnvdClientSettings.DEFAULTS, Clock.systemUTC());

    /** What a finished command printed and how it ended. */
    record Result(String stdout, int exitCode) {}

    private GuestCommands() {}

    /** Runs {@code bash -c script} to its end. */
    static Result run(SandboxId id, GuestEndpoint guest, AccessToken token, String script) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        AtomicReference<ProcessEvent.EndEvent> end = new AtomicReference<>();
        try (EnvdClient envd = CLIENTS.open(id, EnvdAddress.of(guest), Optional.of(token))) {
            envd.serverStream(
                    "process.Process/Start",
                    start(script),
                    StartResponse.getDefaultInstance(),
                    Optional.empty(),
                    Optional.of("user"),
                    response -> {
                        ProcessEvent event = response.getEvent();
                        if (event.hasData()) {
                            out.writeBytes(event.getData().getStdout().toByteArray());
                        }
                        if (event.hasEnd()) {
                            end.set(event.getEnd());
                        }
                    });
        }
        if (end.get() == null) {
            throw new IllegalStateException("the process stream ended without an end event");
        }
        return new Result(
                out.toString(StandardCharsets.UTF_8).strip(), end.get().getExitCode());
    }

    /** Starts {@code bash -c script} and returns its pid as soon as it runs; the command keeps running. */
    static long background(SandboxId id, GuestEndpoint guest, AccessToken token, String script) throws Exception {
        try (EnvdClient envd = CLIENTS.open(id, EnvdAddress.of(guest), Optional.of(token))) {
            envd.serverStream(
                    "process.Process/Start",
                    start(script),
                    StartResponse.getDefaultInstance(),
                    Optional.empty(),
                    Optional.of("user"),
                    response -> {
                        if (response.getEvent().hasStart()) {
                            // leaves the stream (envd keeps the process running without a reader)
                            throw new Started(response.getEvent().getStart().getPid());
                        }
                    });
        } catch (Started started) {
            return started.pid;
        }
        throw new IllegalStateException("the process stream ended without a start event");
    }

    private static StartRequest start(String script) {
        return StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder()
                        .setCmd("/bin/bash")
                        .addArgs("-c")
                        .addArgs(script))
                .build();
    }

    private static final class Started extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final long pid;

        Started(long pid) {
            super("started", null, false, false);
            this.pid = pid;
        }
    }
}
