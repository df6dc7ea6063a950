package io.agentenv.envd.client;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Optional;

/**
 * To a sandbox's envd through the server's sandbox proxy, as the E2B SDK reaches it: requests go to the API URL with the
 * routing headers {@code E2b-Sandbox-Id} and {@code E2b-Sandbox-Port: 49983}. It runs on the JDK's {@link HttpClient}
 * and touches neither Jetty nor a logger, so that a short-lived process (the {@code aenv} CLI) loads neither.
 */
public final class ProxyTransport implements EnvdTransport {
    public static final int ENVD_PORT = 49983;

    private final URI base;
    private final String sandboxId;
    private final HttpClient http;

    /** {@code base}: the server's API URL, which the proxy answers on. */
    public ProxyTransport(URI base, String sandboxId, HttpClient http) {
        this.base = requireNonNull(base, "base is null");
        this.sandboxId = requireNonNull(sandboxId, "sandboxId is null");
        this.http = requireNonNull(http, "http is null");
    }

    @Override
    public Answer send(Request request) throws IOException, InterruptedException {
        URI uri =
                base.resolve(request.path() + request.query().map(q -> "?" + q).orElse(""));
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                .timeout(request.timeout())
                .header("E2b-Sandbox-Id", sandboxId)
                .header("E2b-Sandbox-Port", Integer.toString(ENVD_PORT));
        request.headers().forEach(builder::header);
        HttpRequest.BodyPublisher publisher = request.body()
                .map(body -> switch (body) {
                    case Body.Bytes bytes -> HttpRequest.BodyPublishers.ofByteArray(bytes.bytes());
                    case Body.Stream stream ->
                        stream.length() < 0
                                ? HttpRequest.BodyPublishers.ofInputStream(stream.open())
                                : HttpRequest.BodyPublishers.fromPublisher(
                                        HttpRequest.BodyPublishers.ofInputStream(stream.open()), stream.length());
                })
                .orElse(HttpRequest.BodyPublishers.noBody());
        request.body().ifPresent(body -> builder.header("Content-Type", body.contentType()));
        builder.method(request.method(), publisher);
        HttpResponse<InputStream> response;
        try {
            response = http.send(builder.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException e) {
            throw new IOException("cannot reach " + base + ": " + EnvdClient.describe(e), e);
        }
        return new Answer() {
            @Override
            public int status() {
                return response.statusCode();
            }

            @Override
            public Optional<String> header(String name) {
                return response.headers().firstValue(name);
            }

            @Override
            public InputStream body() {
                return response.body();
            }

            @Override
            public void close() {
                try {
                    response.body().close();
                } catch (IOException e) {
                    // the exchange is over either way
                }
            }
        };
    }

    /** The HTTP client is the caller's: it is left open. */
    @Override
    public void close() {}
}
