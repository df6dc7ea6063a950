package io.agentenv.backend.container.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
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
class HostPartsTest {

    @Test
    void the_criu_options_add_tcp_close_external_unix_sockets_and_ignored_cgroups_to_the_host_setups_once() {
        String options = HostParts.criuOptions("network-lock skip\ntcp-close\n");

        assertThat(options.lines().toList())
                .containsExactly("network-lock skip", "tcp-close", "ext-unix-sk", "manage-cgroups=ignore");
    }

    @Test
    void ignored_cgroups_are_one_token_because_criu_reads_a_separate_argument_of_that_option_as_soft_mode() {
        assertThat(HostParts.criuOptions("").lines()).contains("manage-cgroups=ignore").doesNotContain("manage-cgroups ignore");
    }

    @Test
    void a_claim_is_recorded_in_a_claims_dir_made_by_the_first_one_and_a_later_claim_of_the_sandbox_replaces_it(
            @TempDir Path dir) throws Exception {
        Path claims = dir.resolve("claims");
        SandboxId first = SandboxId.random(new SecureRandom());
        SandboxId second = SandboxId.random(new SecureRandom());

        HostParts.recordClaim(claims, first, new ContainerId("aenv-warm-1"));
        HostParts.recordClaim(claims, second, new ContainerId("aenv-warm-2"));
        HostParts.recordClaim(claims, first, new ContainerId("aenv-warm-3"));

        assertThat(claims.resolve(first.value())).hasContent("aenv-warm-3");
        assertThat(claims.resolve(second.value())).hasContent("aenv-warm-2");
        try (Stream<Path> files = Files.list(claims)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder(first.value(), second.value());
        }
    }

    @Test
    void deleting_a_tree_removes_its_symlinks_without_following_them_and_a_missing_tree_is_no_error(@TempDir Path dir)
            throws Exception {
        Path outside = Files.writeString(dir.resolve("outside.txt"), "host file");
        Path tree = Files.createDirectories(dir.resolve("tree/nested"));
        Files.writeString(tree.resolve("file"), "x");
        Files.createSymbolicLink(tree.resolve("link-to-file"), outside);
        Files.createSymbolicLink(dir.resolve("tree/link-to-dir"), dir);

        FileTrees.deleteTree(dir.resolve("tree"));
        FileTrees.deleteTree(dir.resolve("tree"));

        assertThat(dir.resolve("tree")).doesNotExist();
        assertThat(outside).hasContent("host file");
    }
}
