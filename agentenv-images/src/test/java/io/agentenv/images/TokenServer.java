package io.agentenv.images;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A token server for the reference registry's {@code auth: token}: issues RS256 JWTs signed with a key and
 * self-signed certificate made by keytool (the certificate is the registry's root bundle and rides in each token's
 * {@code x5c} header). Repositories under {@code public/} may be pulled anonymously; anything else needs
 * {@link #USER}/{@link #PASSWORD}; wrong credentials are answered 401.
 */
final class TokenServer implements AutoCloseable {

    static final String USER = "tokenuser";
    static final String PASSWORD = "t0ken-Secret-77";
    static final String SERVICE = "agentenv-test-registry";
    static final String ISSUER = "agentenv-test-issuer";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final char[] STORE_PASSWORD = "changeit".toCharArray();

    private final HttpServer server;
    private final PrivateKey key;
    private final X509Certificate certificate;
    private final AtomicInteger issued = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();

    /** Makes a key pair and certificate in {@code dir}, writes {@code token.pem} there and starts serving. */
    TokenServer(Path dir) throws Exception {
        Path store = dir.resolve("token.p12");
        Cmd.run(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-alias",
                "token",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-sigalg",
                "SHA256withRSA",
                "-dname",
                "CN=agentenv-test-token",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                store.toString(),
                "-storepass",
                new String(STORE_PASSWORD));
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, STORE_PASSWORD);
        }
        key = (PrivateKey) keys.getKey("token", STORE_PASSWORD);
        certificate = (X509Certificate) keys.getCertificate("token");
        Files.writeString(
                dir.resolve("token.pem"),
                "-----BEGIN CERTIFICATE-----\n"
                        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                                .encodeToString(certificate.getEncoded())
                        + "\n-----END CERTIFICATE-----\n");
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/token", this::token);
        server.start();
    }

    String realm() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/token";
    }

    int issued() {
        return issued.get();
    }

    int refused() {
        return refused.get();
    }

    private void token(HttpExchange exchange) throws IOException {
        try (exchange) {
            String header = exchange.getRequestHeaders().getFirst("Authorization");
            boolean authenticated = false;
            if (header != null) {
                String expected =
                        Base64.getEncoder().encodeToString((USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8));
                if (!header.equals("Basic " + expected)) {
                    refused.incrementAndGet();
                    send(exchange, 401, "{\"details\":\"invalid username or password\"}");
                    return;
                }
                authenticated = true;
            }
            List<String> scopes = new ArrayList<>();
            String query = exchange.getRequestURI().getRawQuery();
            for (String pair : query == null ? new String[0] : query.split("&")) {
                if (pair.startsWith("scope=")) {
                    scopes.add(URLDecoder.decode(pair.substring("scope=".length()), StandardCharsets.UTF_8));
                }
            }
            send(exchange, 200, JSON.writeValueAsString(java.util.Map.of("token", jwt(scopes, authenticated))));
            issued.incrementAndGet();
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    /** A token granting pull on the scopes this caller may pull. */
    private String jwt(List<String> scopes, boolean authenticated) throws Exception {
        ObjectNode header = JSON.createObjectNode().put("typ", "JWT").put("alg", "RS256");
        header.putArray("x5c").add(Base64.getEncoder().encodeToString(certificate.getEncoded()));
        long now = Instant.now().getEpochSecond();
        ObjectNode claims = JSON.createObjectNode()
                .put("iss", ISSUER)
                .put("sub", authenticated ? USER : "")
                .put("aud", SERVICE)
                .put("exp", now + 300)
                .put("nbf", now - 10)
                .put("iat", now)
                .put("jti", UUID.randomUUID().toString());
        var access = claims.putArray("access");
        for (String scope : scopes) {
            String[] parts = scope.split(":");
            if (parts.length == 3
                    && parts[0].equals("repository")
                    && (authenticated || parts[1].startsWith("public/"))) {
                ObjectNode grant = access.addObject().put("type", "repository").put("name", parts[1]);
                grant.putArray("actions").add("pull");
            }
        }
        Base64.Encoder url = Base64.getUrlEncoder().withoutPadding();
        String signingInput = url.encodeToString(JSON.writeValueAsBytes(header)) + "."
                + url.encodeToString(JSON.writeValueAsBytes(claims));
        Signature signature = Signature.getInstance("SHA256withRSA");
        signature.initSign(key);
        signature.update(signingInput.getBytes(StandardCharsets.US_ASCII));
        return signingInput + "." + url.encodeToString(signature.sign());
    }

    private static void send(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
