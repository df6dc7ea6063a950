package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.TemplateBuildFileUpload;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.ErrorKind;
import io.agentenv.orchestrator.TemplateBuilder;
import io.agentenv.orchestrator.TemplateFiles;
import io.agentenv.server.templates.TemplateFileStore;
import io.agentenv.spi.TemplateId;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The file uploads of template builds' COPY steps, as the SDK's {@code Template.build} drives them: {@code GET
 * /templates/{templateID}/files/{hash}} (with the API key) answers 201 {@code {present, url}}: whether the files of that
 * hash are kept for the template, and a URL on this server (the scheme and host the request was sent to) where a
 * {@code PUT} of their tar archive stores them, which the SDK uses when they are not there or it is told to upload
 * anyway. The URL carries its expiry and a nonce, signed with HMAC-SHA256 under a key made at start: the PUT needs no
 * API key, and is refused with 403 when the signature does not match, has expired (after {@link #LINK_LIFETIME}) or was
 * used before (each URL works once; a restart voids them all). The body is at most the configured size (413 beyond);
 * one that is not a tar archive safe to extract is refused with 400 (see {@link TemplateFileStore}). The SDK's files
 * hash is taken as the upload's name, as sent: it is a hash of the source files' paths, modes and contents, which the
 * server cannot recompute from the archive.
 */
final class TemplateFileEndpoints {
    static final Duration LINK_LIFETIME = Duration.ofHours(1);
    /** How much of a refused body is read before answering, so that the client reads the answer (not a reset). */
    private static final long DRAIN_LIMIT = 8L << 20;

    private static final String ALGORITHM = "HmacSHA256";

    private final TemplateBuilder builder;
    private final TemplateFileStore files;
    private final long maxBytes;
    private final Clock clock;
    private final SecureRandom random;
    private final SecretKeySpec key;
    /** The nonces of URLs used, with their expiry (epoch seconds); forgotten once expired. */
    private final Map<String, Long> used = new ConcurrentHashMap<>();

    TemplateFileEndpoints(
            TemplateBuilder builder, TemplateFileStore files, long maxBytes, Clock clock, SecureRandom random) {
        this.builder = requireNonNull(builder, "builder is null");
        this.files = requireNonNull(files, "files is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.random = requireNonNull(random, "random is null");
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be >= 1");
        }
        this.maxBytes = maxBytes;
        byte[] secret = new byte[32];
        random.nextBytes(secret);
        this.key = new SecretKeySpec(secret, ALGORITHM);
    }

    void register(Router router) {
        router.add("GET", "/templates/{templateID}/files/{hash}", this::link)
                .addPublicStream("PUT", "/templates/{templateID}/files/{hash}", this::upload);
    }

    private Reply link(Exchange ex) {
        String id = ex.param("templateID");
        if (!TemplateId.isValid(id)) {
            throw AgentEnvException.invalidArgument("bad template id");
        }
        TemplateId template = new TemplateId(id);
        String hash = ex.param("hash");
        if (!TemplateFiles.isHash(hash)) {
            throw AgentEnvException.invalidArgument("files hash must be 64 lowercase hex digits");
        }
        if (builder.builds(template).isEmpty()) {
            throw new AgentEnvException(ErrorKind.NOT_FOUND, "template " + id + " not found");
        }
        long expires = clock.instant().plus(LINK_LIFETIME).getEpochSecond();
        byte[] nonceBytes = new byte[16];
        random.nextBytes(nonceBytes);
        String nonce = HexFormat.of().formatHex(nonceBytes);
        String url = ex.origin() + "/templates/" + id + "/files/" + hash + "?expires=" + expires + "&nonce=" + nonce
                + "&signature=" + sign(id, hash, expires, nonce);
        return new Reply.Json(201, new TemplateBuildFileUpload(files.present(template, hash), url));
    }

    private Reply upload(Exchange ex) throws IOException {
        TemplateId template = authorize(ex);
        String hash = ex.param("hash");
        if (ex.length() > maxBytes) {
            refuse(ex.stream(), ex.length());
        }
        try {
            files.save(template, hash, ex.stream(), maxBytes);
        } catch (TemplateFileStore.TooLarge e) {
            refuse(ex.stream(), ex.length());
        }
        return Reply.NO_CONTENT;
    }

    /** The signed URL's template, once its signature is checked, unexpired and not used before (then it is used). */
    private TemplateId authorize(Exchange ex) {
        String id = ex.param("templateID");
        String hash = ex.param("hash");
        Optional<String> expiresText = ex.queryValue("expires");
        Optional<String> nonce = ex.queryValue("nonce");
        Optional<String> signature = ex.queryValue("signature");
        if (expiresText.isEmpty() || nonce.isEmpty() || signature.isEmpty()) {
            throw new HttpProblem(403, "the upload URL is not signed");
        }
        long expires;
        try {
            expires = Long.parseLong(expiresText.get());
        } catch (NumberFormatException e) {
            throw new HttpProblem(403, "the upload URL's signature does not match");
        }
        if (!TemplateId.isValid(id)
                || !TemplateFiles.isHash(hash)
                || !MessageDigest.isEqual(
                        sign(id, hash, expires, nonce.get()).getBytes(StandardCharsets.UTF_8),
                        signature.get().getBytes(StandardCharsets.UTF_8))) {
            throw new HttpProblem(403, "the upload URL's signature does not match");
        }
        long now = clock.instant().getEpochSecond();
        if (expires < now) {
            throw new HttpProblem(403, "the upload URL has expired");
        }
        used.values().removeIf(expiry -> expiry < now);
        if (used.putIfAbsent(nonce.get(), expires) != null) {
            throw new HttpProblem(403, "the upload URL was used already");
        }
        return new TemplateId(id);
    }

    /** 413, after reading a bounded part of the rest of the body. */
    private void refuse(InputStream body, long declared) throws IOException {
        if (declared <= DRAIN_LIMIT) {
            byte[] buffer = new byte[64 * 1024];
            long total = 0;
            int n;
            while (total < DRAIN_LIMIT && (n = body.read(buffer)) > 0) {
                total += n;
            }
        }
        throw new HttpProblem(413, "the upload is larger than " + maxBytes + " bytes");
    }

    private String sign(String template, String hash, long expires, String nonce) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            byte[] digest = mac.doFinal(("template-files\n" + template + "\n" + hash + "\n" + expires + "\n" + nonce)
                    .getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
