package io.agentenv.envd.client;

import static java.util.Objects.requireNonNull;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamRequestContent;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * To an envd at an {@link EnvdAddress} the caller reaches itself, on a Jetty {@link HttpClient} of its own (keep-alive
 * connections with TCP_NODELAY, opened by {@link EnvdClients}): a buffered answer is read whole, up to the size limit,
 * before {@link #send} returns; a streamed one as it arrives.
 */
final class DirectTransport implements EnvdTransport {
    private static final Logger log = LoggerFactory.getLogger(DirectTransport.class);

    private final HttpClient http;
    private final EnvdAddress address;
    private final Optional<Transport> unix;
    private final int maxResponseBytes;

    DirectTransport(HttpClient http, EnvdAddress address, int maxResponseBytes) {
        this.http = requireNonNull(http, "http is null");
        this.address = requireNonNull(address, "address is null");
        this.maxResponseBytes = maxResponseBytes;
        this.unix = switch (address) {
            case EnvdAddress.Unix u -> Optional.of(new Transport.TCPUnix(u.socket()));
            case EnvdAddress.Tcp t -> Optional.empty();
        };
    }

    @Override
    public Answer send(Request request) throws IOException, InterruptedException {
        org.eclipse.jetty.client.Request jetty = http.newRequest(uri(request)).method(request.method());
        unix.ifPresent(jetty::transport);
        jetty.headers(h -> request.headers().forEach(h::put));
        request.body()
                .ifPresent(body -> jetty.body(
                        switch (body) {
                            case Body.Bytes bytes -> new BytesRequestContent(bytes.contentType(), bytes.bytes());
                            case Body.Stream stream ->
                                new InputStreamRequestContent(
                                        stream.contentType(),
                                        stream.open().get(),
                                        new ByteBufferPool.Sized(http.getByteBufferPool(), false, 64 * 1024));
                        }));
        long timeout = request.timeout().toMillis();
        if (!request.streamed()) {
            jetty.timeout(timeout, TimeUnit.MILLISECONDS);
            CompletableFuture<ContentResponse> answer = new CompletableResponseListener(jetty, maxResponseBytes).send();
            try {
                ContentResponse response = answer.get();
                return new Buffered(
                        response.getStatus(), response.getHeaders(), new ByteArrayInputStream(response.getContent()));
            } catch (InterruptedException e) {
                jetty.abort(e);
                throw e;
            } catch (ExecutionException e) {
                throw new IOException(String.valueOf(e.getCause()), e.getCause());
            }
        }
        InputStreamResponseListener listener = new InputStreamResponseListener();
        jetty.send(listener);
        try {
            Response response = listener.get(timeout, TimeUnit.MILLISECONDS);
            return new Streamed(response.getStatus(), response.getHeaders(), listener.getInputStream(), jetty);
        } catch (InterruptedException e) {
            jetty.abort(e);
            throw e;
        } catch (TimeoutException e) {
            jetty.abort(e);
            throw new IOException("no answer within " + request.timeout(), e);
        } catch (ExecutionException e) {
            throw new IOException(String.valueOf(e.getCause()), e.getCause());
        }
    }

    private URI uri(Request request) {
        String host = switch (address) {
            case EnvdAddress.Unix u -> "localhost";
            case EnvdAddress.Tcp t -> t.host();
        };
        int port = switch (address) {
            case EnvdAddress.Unix u -> 80;
            case EnvdAddress.Tcp t -> t.port();
        };
        try {
            // the query is encoded already: a URI built from parts would encode its % again
            URI base = new URI("http", null, host, port, request.path(), null, null);
            return request.query().map(q -> URI.create(base + "?" + q)).orElse(base);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("cannot build an envd URI for host " + host, e);
        }
    }

    /** Stops the client (its connections); a failure to stop is logged, not thrown (it runs on clean-up paths). */
    @Override
    public void close() {
        try {
            http.stop();
        } catch (Exception e) {
            log.atWarn().addKeyValue("envd", address).setCause(e).log("closing the envd client failed");
        }
    }

    private record Buffered(int status, HttpFields headers, InputStream body) implements Answer {
        @Override
        public Optional<String> header(String name) {
            return Optional.ofNullable(headers.get(name));
        }

        @Override
        public void close() {}
    }

    private record Streamed(int status, HttpFields headers, InputStream body, org.eclipse.jetty.client.Request request)
            implements Answer {
        @Override
        public Optional<String> header(String name) {
            return Optional.ofNullable(headers.get(name));
        }

        /** Closing the stream before its end aborts the exchange (the connection is not reused). */
        @Override
        public void close() {
            try {
                body.close();
            } catch (IOException e) {
                request.abort(e);
            }
        }
    }
}
