package io.agentenv.backend.container.host;

import io.agentenv.envd.client.EnvdAddress;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.client.EnvdClientSettings;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * Starts a long-running process through envd's {@code process.Process/Start} (with the envd client the backends use),
 * as the SDK's {@code commands.run(..., background)} does: the process is envd's child, in the sandbox's namespaces, so
 * it is part of every later checkpoint. (A process started with {@code runc exec} after a restore is not: runc does not
 * join the restored time namespace, and CRIU refuses to dump it.)
 */
public final class GuestProcesses {
    private static final EnvdClients CLIENTS = new EnvdClients(EnvdClientSettings.DEFAULTS, Clock.systemUTC());
    /** Names the sandbox in the client's messages only. */
    private static final SandboxId UNNAMED = new SandboxId("guestprocesses000000");

    private GuestProcesses() {}

    /**
     * Starts {@code cmd args} as {@code user} and returns its pid once envd reports the start. A refusal is an
     * {@link IllegalStateException} that names the HTTP status envd answered.
     */
    public static long start(GuestEndpoint guest, AccessToken token, String user, String cmd, List<String> args)
            throws Exception {
        StartRequest start = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder().setCmd(cmd).addAllArgs(args))
                .build();
        // a client (a connection pool) per call: sandboxes of earlier tests had the same address, and a connection
        // pooled to one of them would be reset by the sandbox that has the address now
        try (EnvdClient envd = CLIENTS.open(UNNAMED, EnvdAddress.of(guest), Optional.of(token))) {
            envd.serverStream(
                    "process.Process/Start",
                    start,
                    StartResponse.getDefaultInstance(),
                    Optional.empty(),
                    Optional.of(user),
                    response -> {
                        if (response.getEvent().hasStart()) {
                            // leaves the stream: envd keeps the process running without a reader
                            throw new Started(response.getEvent().getStart().getPid());
                        }
                    });
        } catch (Started started) {
            return started.pid;
        } catch (EnvdException.Rejected e) {
            throw new IllegalStateException("process start answered " + e.status() + ": " + e.getMessage(), e);
        } catch (RpcException e) { // envd's own refusal (a wrong token: unauthenticated) is a Connect error
            throw new IllegalStateException(
                    "process start answered " + e.code().httpStatus() + ": ["
                            + e.code().wireName() + "] " + e.getMessage(),
                    e);
        }
        throw new IllegalStateException("process stream ended before the start event");
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
