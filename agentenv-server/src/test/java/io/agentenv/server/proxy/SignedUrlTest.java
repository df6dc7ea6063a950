package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLEncoder;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SignedUrlTest {
    private static final String TOKEN = "4f00f2a9deadbeef";

    /** As the E2B SDK signs: v1_ + unpadded base64 of sha256("path:op:user:token[:exp]"). */
    private static String sdkSignature(String raw) throws Exception {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(raw.getBytes(UTF_8));
        return "v1_" + Base64.getEncoder().encodeToString(digest).replaceAll("=+$", "");
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, UTF_8);
    }

    @Test
    void a_signature_made_with_the_token_matches_for_its_operation_only() throws Exception {
        String sig = sdkSignature("/home/user/a b.txt:read::" + TOKEN);
        SignedUrl url = SignedUrl.parse("path=" + enc("/home/user/a b.txt") + "&signature=" + enc(sig))
                .orElseThrow();
        assertThat(url.signedWith(TOKEN, "read")).isTrue();
        assertThat(url.signedWith(TOKEN, "write")).isFalse();
        assertThat(url.signedWith("another-token", "read")).isFalse();
    }

    @Test
    void username_and_expiration_are_part_of_the_signature() throws Exception {
        String sig = sdkSignature("f.txt:write:root:" + TOKEN + ":1700000000");
        SignedUrl url = SignedUrl.parse(
                        "path=f.txt&username=root&signature=" + enc(sig) + "&signature_expiration=1700000000")
                .orElseThrow();
        assertThat(url.signedWith(TOKEN, "write")).isTrue();
        assertThat(url.expired(Instant.ofEpochSecond(1700000001))).isTrue();
        assertThat(url.expired(Instant.ofEpochSecond(1700000000))).isFalse();
        SignedUrl otherUser = SignedUrl.parse(
                        "path=f.txt&username=user&signature=" + enc(sig) + "&signature_expiration=1700000000")
                .orElseThrow();
        assertThat(otherUser.signedWith(TOKEN, "write")).isFalse();
    }

    @Test
    void queries_without_a_v1_signature_or_with_a_bad_expiration_are_not_signed_urls() {
        assertThat(SignedUrl.parse("path=a")).isEmpty();
        assertThat(SignedUrl.parse("path=a&signature=v2_x")).isEmpty();
        assertThat(SignedUrl.parse("signature=v1_x&signature_expiration=soon")).isEmpty();
        assertThat(SignedUrl.parse("signature=v1_x&path=%zz")).isEmpty();
        assertThat(SignedUrl.operation("PUT")).isEqualTo(Optional.empty());
    }
}
