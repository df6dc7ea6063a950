package io.agentenv.envd.connect;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.agentenv.envd.http.EnvdRequest;
import io.agentenv.envd.http.EnvdResponse;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.ConnectHeaders;
import io.agentenv.envd.protocol.connect.EndStream;
import io.agentenv.envd.protocol.connect.Envelope;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.users.UnknownUserException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one Connect call over HTTP/1.1: decodes the request, runs the handler, encodes the response. This is the one
 * place where handler exceptions become Connect error codes.
 */
public final class ConnectDispatch {
    private static final Logger log = LoggerFactory.getLogger(ConnectDispatch.class);
    static final int MAX_MESSAGE_BYTES = 32 << 20;
    static final Duration DEFAULT_KEEPALIVE = Duration.ofSeconds(90);

    private final Clock clock;

    public ConnectDispatch(Clock clock) {
        this.clock = requireNonNull(clock, "clock is null");
    }

    /** Serves {@code procedure}; the response is complete when this returns normally. */
    public void serve(Procedure procedure, EnvdRequest request, EnvdResponse response) throws IOException {
        if (!"POST".equals(request.method())) {
            response.header("Allow", "POST");
            writeUnaryError(response, 405, new RpcException(ConnectCode.UNIMPLEMENTED, "method must be POST"));
            return;
        }
        String contentType = request.header("Content-Type");
        Optional<WireFormat> format = switch (procedure) {
            case Procedure.Unary<?, ?> _ -> WireFormat.ofUnary(contentType);
            case Procedure.ServerStream<?, ?> _, Procedure.ClientStream<?, ?> _ -> WireFormat.ofStream(contentType);
        };
        if (format.isEmpty()) {
            unsupportedMediaType(response, contentType);
            return;
        }
        switch (procedure) {
            case Procedure.Unary<?, ?> unary -> serveUnary(unary, format.get(), request, response);
            case Procedure.ServerStream<?, ?> stream -> serveServerStream(stream, format.get(), request, response);
            case Procedure.ClientStream<?, ?> stream -> serveClientStream(stream, format.get(), request, response);
        }
    }

    /** The error for an RPC path that is not registered. */
    public void unknownProcedure(String path, EnvdResponse response) throws IOException {
        writeUnaryError(response, 404, new RpcException(ConnectCode.UNIMPLEMENTED, "unknown procedure " + path));
    }

    /** The error for a call without the access token. */
    public void unauthenticated(EnvdResponse response) throws IOException {
        writeUnaryError(
                response,
                401,
                new RpcException(
                        ConnectCode.UNAUTHENTICATED, "unauthorized access, please provide a valid access token"));
    }

    private void serveUnary(Procedure.Unary<?, ?> unary, WireFormat format, EnvdRequest request, EnvdResponse response)
            throws IOException {
        RpcException error;
        try {
            CallContext call = context(unary.name(), format, request);
            byte[] body = readBody(request);
            Message reply = unary.invoke(format.parse(body, unary.requestPrototype()), call);
            byte[] bytes = format.serialize(reply);
            response.send(200, format.unaryContentType(), bytes);
            return;
        } catch (Exception e) {
            error = toRpc(unary.name(), e);
        }
        writeUnaryError(response, error.code().httpStatus(), error);
    }

    private void serveServerStream(
            Procedure.ServerStream<?, ?> stream, WireFormat format, EnvdRequest request, EnvdResponse response)
            throws IOException {
        response.header("Content-Type", format.streamContentType());
        OutputStream out = response.stream(200);
        EndStream end;
        try {
            CallContext call = context(stream.name(), format, request);
            Message message = readSingleEnvelope(request.body(), format, stream.requestPrototype());
            stream.invoke(message, call, new StreamSender<>() {
                @Override
                public void send(Message reply) throws IOException {
                    write(reply);
                    out.flush(); // one chunk: this message and those written before it
                }

                @Override
                public void write(Message reply) throws IOException {
                    out.write(Envelope.message(format.serialize(reply)).encode());
                }
            });
            end = EndStream.ok();
        } catch (IOException e) {
            log.atDebug().addKeyValue("procedure", stream.name()).log("client went away during a stream");
            throw e;
        } catch (Exception e) {
            end = EndStream.failed(toRpc(stream.name(), e));
        }
        // what the handler wrote last without sending, the end-of-stream envelope and the terminating chunk leave in
        // one write (the JDK's chunked stream writes its last chunks into the connection's buffer, then flushes once)
        out.write(end.toEnvelope().encode());
        out.close();
    }

    private void serveClientStream(
            Procedure.ClientStream<?, ?> stream, WireFormat format, EnvdRequest request, EnvdResponse response)
            throws IOException {
        response.header("Content-Type", format.streamContentType());
        OutputStream out = response.stream(200);
        EndStream end;
        try {
            CallContext call = context(stream.name(), format, request);
            InputStream in = request.body();
            Message reply = stream.invoke(new EnvelopeIterator(in, format, stream.requestPrototype()), call);
            out.write(Envelope.message(format.serialize(reply)).encode());
            end = EndStream.ok();
        } catch (Exception e) {
            end = EndStream.failed(toRpc(stream.name(), e));
        }
        out.write(end.toEnvelope().encode());
        out.close();
    }

    private CallContext context(String procedure, WireFormat format, EnvdRequest request) {
        Optional<Duration> timeout = ConnectHeaders.timeout(request.header(ConnectHeaders.TIMEOUT_MS));
        Duration keepalive = ConnectHeaders.keepaliveInterval(
                request.header(ConnectHeaders.KEEPALIVE_PING_INTERVAL), DEFAULT_KEEPALIVE);
        return new CallContext(
                procedure,
                format,
                basicAuthUser(request.header("Authorization")),
                timeout.map(t -> clock.instant().plus(t)),
                keepalive,
                request::header);
    }

    /** {@code Basic base64("user:")}: the user name, password ignored (E2B sends none). */
    static Optional<String> basicAuthUser(String authorization) {
        if (authorization == null || authorization.isBlank()) {
            return Optional.empty();
        }
        String[] parts = authorization.strip().split("\\s+", 2);
        if (parts.length != 2 || !parts[0].equalsIgnoreCase("Basic")) {
            throw new RpcException(ConnectCode.UNAUTHENTICATED, "authorization header must use the Basic scheme");
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(parts[1]), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new RpcException(ConnectCode.UNAUTHENTICATED, "malformed Basic authorization header");
        }
        int colon = decoded.indexOf(':');
        String user = colon < 0 ? decoded : decoded.substring(0, colon);
        return user.isEmpty() ? Optional.empty() : Optional.of(user);
    }

    private static Message readSingleEnvelope(InputStream in, WireFormat format, Message prototype) throws IOException {
        Envelope envelope = Envelope.read(in, MAX_MESSAGE_BYTES)
                .orElseThrow(() -> RpcException.invalidArgument("protocol error: missing request message"));
        if (envelope.isCompressed()) {
            throw new RpcException(ConnectCode.INTERNAL, "protocol error: compressed messages are not supported");
        }
        if (Envelope.read(in, MAX_MESSAGE_BYTES).isPresent()) {
            throw RpcException.invalidArgument("protocol error: a server stream takes exactly one request message");
        }
        return format.parse(envelope.payload(), prototype);
    }

    private static byte[] readBody(EnvdRequest request) throws IOException {
        InputStream in = request.body();
        byte[] body = in.readNBytes(MAX_MESSAGE_BYTES + 1);
        if (body.length > MAX_MESSAGE_BYTES) {
            throw new RpcException(
                    ConnectCode.RESOURCE_EXHAUSTED, "request is larger than " + MAX_MESSAGE_BYTES + " bytes");
        }
        return body;
    }

    private static void unsupportedMediaType(EnvdResponse response, String contentType) throws IOException {
        writeUnaryError(
                response,
                415,
                new RpcException(
                        ConnectCode.UNKNOWN,
                        "unsupported content type " + (contentType == null ? "<none>" : contentType)));
    }

    private static void writeUnaryError(EnvdResponse response, int status, RpcException error) throws IOException {
        response.send(status, "application/json", error.toJson());
    }

    /** The only mapping from handler failures to Connect errors. */
    static RpcException toRpc(String procedure, Throwable failure) {
        return switch (failure) {
            case RpcException rpc -> rpc;
            case UnknownUserException unknown -> new RpcException(ConnectCode.UNAUTHENTICATED, unknown.getMessage());
            case Procedure.ClientGone gone ->
                new RpcException(ConnectCode.CANCELED, "client closed the request stream");
            case InterruptedException interrupted -> {
                Thread.currentThread().interrupt();
                yield new RpcException(ConnectCode.UNAVAILABLE, "envd is stopping");
            }
            default -> {
                String reference = UUID.randomUUID().toString();
                log.atError()
                        .setCause(failure)
                        .addKeyValue("procedure", procedure)
                        .addKeyValue("ref", reference)
                        .log("rpc failed");
                yield new RpcException(ConnectCode.INTERNAL, "internal error (ref " + reference + ")");
            }
        };
    }

    /** Reads client-stream envelopes lazily until the request body ends. */
    private static final class EnvelopeIterator implements Iterator<Message> {
        private final InputStream in;
        private final WireFormat format;
        private final Message prototype;
        private Message next;
        private boolean done;

        EnvelopeIterator(InputStream in, WireFormat format, Message prototype) {
            this.in = in;
            this.format = format;
            this.prototype = prototype;
        }

        @Override
        public boolean hasNext() {
            if (next != null) {
                return true;
            }
            if (done) {
                return false;
            }
            try {
                Optional<Envelope> envelope = Envelope.read(in, MAX_MESSAGE_BYTES);
                if (envelope.isEmpty() || envelope.get().isEndStream()) {
                    done = true;
                    return false;
                }
                if (envelope.get().isCompressed()) {
                    throw new RpcException(
                            ConnectCode.INTERNAL, "protocol error: compressed messages are not supported");
                }
                next = format.parse(envelope.get().payload(), prototype);
                return true;
            } catch (IOException e) {
                throw new Procedure.ClientGone(e);
            }
        }

        @Override
        public Message next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Message result = next;
            next = null;
            return result;
        }
    }
}
