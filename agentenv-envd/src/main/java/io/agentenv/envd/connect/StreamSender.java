package io.agentenv.envd.connect;

import java.io.IOException;

/** Sends the messages of a server stream, each flushed at once. */
@FunctionalInterface
public interface StreamSender<T> {
    /** @throws IOException when the client has gone away; the handler should stop and return */
    void send(T message) throws IOException;
}
