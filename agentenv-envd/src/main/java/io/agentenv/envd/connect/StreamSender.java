package io.agentenv.envd.connect;

import java.io.IOException;

/**
 * Sends the messages of a server stream. {@link #send} puts a message on the wire at once; {@link #write} only queues
 * it behind what is already queued, for a caller that knows what follows without waiting (another message it is about
 * to send, or the stream's end when the handler returns next): the whole batch then leaves in one write.
 */
@FunctionalInterface
public interface StreamSender<T> {
    /**
     * Sends {@code message} and everything written before it.
     *
     * @throws IOException when the client has gone away; the handler should stop and return
     */
    void send(T message) throws IOException;

    /**
     * Queues {@code message} without sending it: it goes out with the next {@link #send} or with the stream's end.
     * Use it only when that follows at once (never before waiting for something), or the client waits for it. A
     * sender that cannot queue sends it at once.
     *
     * @throws IOException when the client has gone away; the handler should stop and return
     */
    default void write(T message) throws IOException {
        send(message);
    }
}
