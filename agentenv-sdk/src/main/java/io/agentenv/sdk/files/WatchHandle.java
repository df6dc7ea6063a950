package io.agentenv.sdk.files;

import com.google.protobuf.InvalidProtocolBufferException;
import io.agentenv.envd.protocol.filesystem.WatchDirResponse;
import io.agentenv.sdk.SandboxException;
import io.agentenv.sdk.internal.ServerStream;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A running directory watch ({@link Files#watchDir}); events reach its callback on a reader thread until
 * {@link #stop()} (or {@link #close()}), its timeout, or a failure.
 */
public final class WatchHandle implements AutoCloseable {
    private final ServerStream stream;
    private final Consumer<FilesystemEvent> onEvent;
    private final Optional<Consumer<Optional<Throwable>>> onExit;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    WatchHandle(
            ServerStream stream, Consumer<FilesystemEvent> onEvent, Optional<Consumer<Optional<Throwable>>> onExit) {
        this.stream = stream;
        this.onEvent = onEvent;
        this.onExit = onExit;
    }

    void pump() {
        Optional<Throwable> failure = Optional.empty();
        try {
            while (true) {
                Optional<byte[]> message = stream.next();
                if (message.isEmpty()) {
                    break;
                }
                WatchDirResponse response;
                try {
                    response = WatchDirResponse.parseFrom(message.get());
                } catch (InvalidProtocolBufferException e) {
                    throw new SandboxException("envd sent a malformed watch event", e);
                }
                if (response.getEventCase() == WatchDirResponse.EventCase.FILESYSTEM) {
                    Files.event(response.getFilesystem()).ifPresent(onEvent);
                }
            }
        } catch (RuntimeException e) {
            failure = Optional.of(e);
        } finally {
            stream.close();
        }
        Optional<Throwable> result = failure;
        try {
            onExit.ifPresent(c -> c.accept(result));
        } finally {
            if (result.isPresent()) {
                done.completeExceptionally(result.get());
            } else {
                done.complete(null);
            }
        }
    }

    /** Completes when the watch has ended (exceptionally with its failure). */
    public CompletableFuture<Void> onExit() {
        return done.copy();
    }

    /** Stops watching. */
    public void stop() {
        stream.close();
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }
}
