package io.agentenv.backend.container.leftovers;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.BackendFixture;
import io.agentenv.backend.container.guest.GuestMounts;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.HostLayout;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** What the start-up reconciler ({@link LeftoverReaper}) removes of the host's shared parts. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LeftoverReaperHostTest {

    @Test
    void a_backend_start_removes_replaced_guest_mount_sources_unless_a_sandbox_binds_one() throws Exception {
        // given, in the host's guest-mounts dir, two sources an earlier start moved aside; one is still bound in
        // another mount namespace, as a sandbox started before the replacement binds its /dev
        HostFixture.requireHost(HostLayout.unreadyReason(HostLayout.DEFAULT_HOST_ENV));
        Path guestMounts = GuestMounts.dir(HostLayout.load(HostLayout.DEFAULT_HOST_ENV));
        Path unbound = Files.createDirectories(guestMounts.resolve(".cgroup-stale-" + UUID.randomUUID()));
        Files.createDirectory(unbound.resolve("memory"));
        Path bound = Files.createDirectories(guestMounts.resolve(".dev-stale-" + UUID.randomUUID()));
        Files.writeString(bound.resolve("null"), "what a running sandbox sees");
        Path target = Files.createTempDirectory(Path.of("/var/tmp"), "aenv-bind-target-");
        Process holder = new ProcessBuilder(
                        "unshare",
                        "--mount",
                        "--propagation",
                        "private",
                        "sh",
                        "-c",
                        "mount --bind \"$0\" \"$1\" && echo bound && exec sleep 600",
                        bound.toString(),
                        target.toString())
                .redirectErrorStream(true)
                .start();
        try {
            assertThat(new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))
                            .readLine())
                    .isEqualTo("bound");

            // when a backend starts (BackendFixture reaps the leftovers, as the server does at start-up)
            try (BackendFixture backend = BackendFixture.create(Map.of())) {

                // then
                assertThat(unbound).doesNotExist();
                assertThat(bound.resolve("null")).hasContent("what a running sandbox sees");
            }
        } finally {
            holder.destroyForcibly();
            holder.waitFor();
            HostFixture.deleteTree(unbound);
            HostFixture.deleteTree(bound);
            HostFixture.deleteTree(target);
        }
    }
}
