package io.agentenv.backend.container.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.spi.SandboxId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerNamesTest {

    @Test
    void a_claim_is_recorded_in_a_claims_dir_made_by_the_first_a_later_claim_replaces_it(@TempDir Path dir)
            throws Exception {
        Path claims = dir.resolve("claims");
        SandboxId first = SandboxId.random(new SecureRandom());
        SandboxId second = SandboxId.random(new SecureRandom());

        ContainerNames.recordClaim(claims, first, new ContainerId("aenv-warm-1"));
        ContainerNames.recordClaim(claims, second, new ContainerId("aenv-warm-2"));
        ContainerNames.recordClaim(claims, first, new ContainerId("aenv-warm-3"));

        assertThat(claims.resolve(first.value())).hasContent("aenv-warm-3");
        assertThat(claims.resolve(second.value())).hasContent("aenv-warm-2");
        try (Stream<Path> files = Files.list(claims)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder(first.value(), second.value());
        }
    }
}
