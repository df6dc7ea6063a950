package io.agentenv.objectstore;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.MessageDigest;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The digest the stores record: the native one on this platform, equal to the JDK's for any input. */
class Sha256Test {

    @Test
    void the_native_digest_is_used_here_and_agrees_with_the_jdk_s() throws Exception {
        assertThat(Sha256.provider()).isEqualTo("AmazonCorrettoCryptoProvider");
        Random random = new Random(7);
        for (int size : new int[] {0, 1, 55, 56, 64, 65, 4096, 1 << 20}) {
            byte[] data = new byte[size + 3];
            random.nextBytes(data);
            MessageDigest reference = MessageDigest.getInstance("SHA-256", "SUN");
            reference.update(data, 3, size);
            MessageDigest digest = Sha256.newDigest();
            digest.update(data, 0, 3); // offsets and several updates
            digest.reset();
            digest.update(data, 3, size / 2);
            digest.update(data, 3 + size / 2, size - size / 2);
            assertThat(Sha256.hex(digest.digest())).isEqualTo(Sha256.hex(reference.digest()));
        }
    }
}
