package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import java.util.Optional;
import java.util.function.Function;

/**
 * Which sandbox a signed envd {@code /files} URL is for: the URL names none, so the one whose envd access token made
 * the signature is looked for among candidates (one SHA-256 each). A node's proxy tries the running sandboxes it lists;
 * a gateway tries the cluster's running sandboxes, to send the request to the owner.
 */
public final class SignedFiles {
    private SignedFiles() {}

    /**
     * The candidate whose token signed {@code rawQuery} for {@code method} (GET reads, POST writes); empty when the
     * query holds no valid signature or none of them signed it. Expiry is not checked here (the sandbox's proxy does).
     */
    public static Optional<String> signer(
            String rawQuery, String method, Iterable<String> candidates, Function<String, String> envdToken) {
        requireNonNull(candidates, "candidates is null");
        requireNonNull(envdToken, "envdToken is null");
        Optional<SignedUrl> signed = SignedUrl.parse(rawQuery);
        Optional<String> operation = method == null ? Optional.empty() : SignedUrl.operation(method);
        if (signed.isEmpty() || operation.isEmpty()) {
            return Optional.empty();
        }
        for (String candidate : candidates) {
            if (signed.get().signedWith(envdToken.apply(candidate), operation.get())) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
