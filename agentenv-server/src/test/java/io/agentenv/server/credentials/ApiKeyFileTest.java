package io.agentenv.server.credentials;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ApiKeyFileTest {
    @TempDir
    Path dataDir;

    private final SecureRandom random = new SecureRandom();

    @Test
    void a_configured_key_wins_and_no_file_is_written() {
        ApiKeyFile.Resolved resolved = ApiKeyFile.resolve(Optional.of("e2b_0123456789abcdef0123"), dataDir, random);
        assertThat(resolved.file()).isEmpty();
        assertThat(resolved.key().matches("e2b_0123456789abcdef0123")).isTrue();
        assertThat(Files.exists(ApiKeyFile.location(dataDir))).isFalse();
    }

    @Test
    void without_a_configured_key_one_is_generated_owner_only_and_reused_on_next_start() throws Exception {
        // when
        ApiKeyFile.Resolved first = ApiKeyFile.resolve(Optional.empty(), dataDir, random);
        ApiKeyFile.Resolved second = ApiKeyFile.resolve(Optional.empty(), dataDir, random);
        // then
        Path file = ApiKeyFile.location(dataDir);
        String stored = Files.readString(file).strip();
        assertThat(stored).matches("e2b_[0-9a-f]{40}");
        assertThat(first.generated()).isTrue();
        assertThat(second.generated()).isFalse();
        assertThat(first.key().matches(stored)).isTrue();
        assertThat(second.key().matches(stored)).isTrue();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())))
                .isEqualTo("rwx------");
        assertThat(first.key().toString()).doesNotContain(stored);
    }

    @Test
    void a_symlinked_key_file_is_refused() throws Exception {
        Path secrets = Files.createDirectories(dataDir.resolve("secrets"));
        Path elsewhere = Files.writeString(dataDir.resolve("elsewhere"), "e2b_0123456789abcdef0123");
        Files.createSymbolicLink(secrets.resolve("api-key"), elsewhere);
        assertThatThrownBy(() -> ApiKeyFile.resolve(Optional.empty(), dataDir, random))
                .hasMessageContaining("cannot read or create the API key file");
    }

    @Test
    void keys_compare_exactly() {
        ApiKey key = ApiKey.of("e2b_0123456789abcdef0123");
        assertThat(key.matches("e2b_0123456789abcdef012")).isFalse();
        assertThat(key.matches("e2b_0123456789abcdef01234")).isFalse();
        assertThat(key.matches(null)).isFalse();
        assertThatThrownBy(() -> ApiKey.of("short"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("short");
    }
}
