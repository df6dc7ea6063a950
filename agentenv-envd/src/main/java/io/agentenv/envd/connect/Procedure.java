package io.agentenv.envd.connect;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.agentenv.envd.protocol.connect.RpcException;
import java.io.IOException;
import java.util.Iterator;

/** A registered RPC: its name, request prototype and handler. */
public sealed interface Procedure {
    String name();

    Message requestPrototype();

    /** A unary handler: one request, one response. Throw {@link RpcException} for a Connect error. */
    @FunctionalInterface
    interface UnaryHandler<Q extends Message, R extends Message> {
        R handle(Q request, CallContext call) throws Exception;
    }

    /** A server-streaming handler. Return normally to end the stream with {@code {}}; throw to end it with an error. */
    @FunctionalInterface
    interface ServerStreamHandler<Q extends Message, R extends Message> {
        void handle(Q request, CallContext call, StreamSender<R> out) throws Exception;
    }

    /** A client-streaming handler: reads every request message, then returns the single response. */
    @FunctionalInterface
    interface ClientStreamHandler<Q extends Message, R extends Message> {
        R handle(Iterator<Q> requests, CallContext call) throws Exception;
    }

    record Unary<Q extends Message, R extends Message>(String name, Q requestPrototype, UnaryHandler<Q, R> handler)
            implements Procedure {
        public Unary {
            requireNonNull(name, "name is null");
            requireNonNull(requestPrototype, "requestPrototype is null");
            requireNonNull(handler, "handler is null");
        }

        @SuppressWarnings("unchecked")
        Message invoke(Message request, CallContext call) throws Exception {
            return handler.handle((Q) request, call);
        }
    }

    record ServerStream<Q extends Message, R extends Message>(
            String name, Q requestPrototype, ServerStreamHandler<Q, R> handler) implements Procedure {
        public ServerStream {
            requireNonNull(name, "name is null");
            requireNonNull(requestPrototype, "requestPrototype is null");
            requireNonNull(handler, "handler is null");
        }

        @SuppressWarnings("unchecked")
        void invoke(Message request, CallContext call, StreamSender<Message> out) throws Exception {
            handler.handle((Q) request, call, (StreamSender<R>) (StreamSender<?>) out);
        }
    }

    record ClientStream<Q extends Message, R extends Message>(
            String name, Q requestPrototype, ClientStreamHandler<Q, R> handler) implements Procedure {
        public ClientStream {
            requireNonNull(name, "name is null");
            requireNonNull(requestPrototype, "requestPrototype is null");
            requireNonNull(handler, "handler is null");
        }

        @SuppressWarnings("unchecked")
        Message invoke(Iterator<? extends Message> requests, CallContext call) throws Exception {
            return handler.handle((Iterator<Q>) requests, call);
        }
    }

    /** Lets handlers signal "client went away" through an iterator. */
    final class ClientGone extends RuntimeException {
        ClientGone(IOException cause) {
            super(cause);
        }
    }
}
