package io.agentenv.sdk.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.sdk.SandboxException;
import io.agentenv.sdk.TimeoutException;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;

/**
 * One Connect server stream: reads envelopes until the end-of-stream envelope, which carries the call's error, if
 * any. A stream cut without that envelope is checked against {@code /health}: a sandbox that is gone makes it a
 * {@link TimeoutException} ("killed or reached its end of life while the request was in flight"), as E2B's SDKs
 * report it. Internal; not part of the API.
 */
public final class ServerStream implements AutoCloseable {
    private final EnvdClient envd;
    private final InputStream body;
    private final String procedure;
    private final boolean filesystem;
    private volatile boolean closed;
    private boolean ended;

    ServerStream(EnvdClient envd, InputStream body, String procedure, boolean filesystem) {
        this.envd = envd;
        this.body = body;
        this.procedure = procedure;
        this.filesystem = filesystem;
    }

    /**
     * The next message's bytes; empty once the stream ended cleanly or was closed by {@link #close()}. Throws the mapped
     * Connect error of the end-of-stream envelope, or a failure when the stream broke off.
     */
    public Optional<byte[]> next() {
        if (ended) {
            return Optional.empty();
        }
        try {
            int flags = body.read();
            if (flags < 0) {
                return brokeOff("the stream ended without its end-of-stream message", null);
            }
            byte[] header = body.readNBytes(4);
            if (header.length < 4) {
                return brokeOff("incomplete envelope", null);
            }
            int length = ((header[0] & 0xff) << 24)
                    | ((header[1] & 0xff) << 16)
                    | ((header[2] & 0xff) << 8)
                    | (header[3] & 0xff);
            if (length < 0 || length > EnvdClient.Envelopes.maxMessage()) {
                throw new SandboxException(procedure + ": message of " + length + " bytes is too large");
            }
            byte[] payload = body.readNBytes(length);
            if (payload.length < length) {
                return brokeOff("incomplete envelope", null);
            }
            if ((flags & EnvdClient.Envelopes.COMPRESSED) != 0) {
                throw new SandboxException(procedure + ": compressed messages are not supported");
            }
            if ((flags & EnvdClient.Envelopes.END_STREAM) != 0) {
                ended = true;
                Optional<JsonNode> end = Json.parse(payload);
                if (end.isPresent() && end.get().has("error")) {
                    JsonNode error = end.get().get("error");
                    throw EnvdClient.rpcError(
                            Json.text(error, "code", "unknown"), Json.text(error, "message", ""), filesystem, 0);
                }
                return Optional.empty();
            }
            return Optional.of(payload);
        } catch (EOFException e) {
            return brokeOff("incomplete envelope", e);
        } catch (IOException e) {
            return brokeOff(ApiClient.describe(e), e);
        }
    }

    private Optional<byte[]> brokeOff(String detail, Throwable cause) {
        ended = true;
        if (closed) {
            return Optional.empty();
        }
        if (envd.confirmedGone()) {
            throw new TimeoutException(
                    procedure + ": " + detail + ": the sandbox was killed or reached its end of life "
                            + "while the request was in flight",
                    0,
                    cause);
        }
        throw new SandboxException(
                procedure + ": the stream from sandbox " + envd.sandboxId() + " broke off (" + detail + ")", cause);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    /** Stops reading and drops the connection (envd keeps a started process running). */
    @Override
    public void close() {
        closed = true;
        try {
            body.close();
        } catch (IOException e) {
            // already broken
        }
    }
}
