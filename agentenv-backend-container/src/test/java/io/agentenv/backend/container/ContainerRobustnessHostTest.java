package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.GuestProcesses;
import io.agentenv.backend.container.host.MountTable;
import io.agentenv.backend.container.lifecycle.ContainerSandbox;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.Liveness;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What goes wrong at the edges of a container sandbox's life: every network slot taken, a sandbox whose envd or whole
 * container dies, and a kill that must leave nothing running. Two slots only ({@code max_sandboxes=2}), no warm pool;
 * the leak check runs after every test.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerRobustnessHostTest {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Duration READY = Duration.ofSeconds(60);
    private static final Duration SOON = Duration.ofSeconds(30);
    private static final TemplateId BASE = new TemplateId("base");

    @SharedBackend(settings = {"max_sandboxes=2"})
    private static BackendFixture backend;

    private static LaunchSpec spec(Map<String, String> env) {
        return new LaunchSpec(
                SandboxId.random(RANDOM),
                BASE,
                env,
                "user",
                new AccessToken("tok-" + RANDOM.nextInt()),
                NetworkPolicy.DEFAULT);
    }

    private static ContainerId container(LaunchSpec spec) {
        return backend.factory.names().containerId(spec.id());
    }

    /** Polls {@code condition} every 50 ms until it holds or {@code within} has passed (then fails with {@code what}). */
    private static void await(String what, Duration within, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " did not happen within " + within);
            }
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
    }

    private static boolean alive(long hostPid) {
        return ProcessHandle.of(hostPid).map(ProcessHandle::isAlive).orElse(false)
                && Files.exists(Path.of("/proc/" + hostPid));
    }

    private static String describe(List<Long> pids) {
        StringBuilder found = new StringBuilder();
        for (long pid : pids) {
            try {
                found.append(Files.readString(Path.of("/proc/" + pid + "/stat")).strip())
                        .append("; ");
            } catch (java.io.IOException gone) {
                // exited
            }
        }
        return found.toString();
    }

    @Test
    void a_launch_beyond_the_slot_limit_is_exhausted_naming_it_and_reserves_nothing() throws Exception {
        // given: both slots in use
        SandboxBackend first = backend.fresh(spec(Map.of()));
        backend.fresh(spec(Map.of()));
        // when / then
        assertThatThrownBy(() -> backend.factory.prepare(spec(Map.of()), new LaunchSource.Template(BASE)))
                .isInstanceOfSatisfying(
                        BackendException.Exhausted.class,
                        e -> assertThat(e.limit())
                                .isEqualTo(
                                        "all 2 sandbox slots of this server are in use (AENV_BACKEND_MAX_SANDBOXES)"));
        // and a slot freed by a close is usable again
        first.close();
        backend.fresh(spec(Map.of()));
    }

    @Test
    void a_closed_sandbox_leaves_no_process_cgroup_mount_netns_runc_state_despite_sigterm() throws Exception {
        // given
        LaunchSpec spec = spec(Map.of());
        SandboxBackend sandbox = backend.fresh(spec);
        GuestProcesses.start(
                sandbox.guest().orElseThrow(),
                spec.accessToken(),
                "user",
                "/bin/sh",
                List.of("-c", "trap '' TERM; while :; do sleep 1; done"));
        List<Long> pids = backend.factory.cgroups().pids(container(spec).value());
        String netns = ((ContainerSandbox) sandbox)
                .hostNetwork()
                .orElseThrow()
                .namespacePath()
                .getFileName()
                .toString();
        assertThat(pids).hasSizeGreaterThan(3);
        // when
        sandbox.close();
        // then: at once, nothing of it is left
        assertThat(pids)
                .as("processes of the closed sandbox still alive: %s", describe(pids))
                .noneMatch(ContainerRobustnessHostTest::alive);
        assertThat(backend.factory.cgroups().pathsOf(container(spec).value()))
                .as("cgroups")
                .isEmpty();
        assertThat(MountTable.mountsUnder(backend.factory.names().sandboxesDir()))
                .as("mounts")
                .isEmpty();
        assertThat(backend.factory.pool().existingResources())
                .as("network namespaces")
                .doesNotContain(netns);
        assertThat(backend.factory.runc().list()).as("runc state").doesNotContain(container(spec));
    }

    @Test
    void a_running_sandbox_is_alive_one_whose_init_was_killed_is_gone_and_closes_cleanly() throws Exception {
        LaunchSpec spec = spec(Map.of());
        SandboxBackend sandbox = backend.fresh(spec);
        assertThat(sandbox.liveness()).isEqualTo(Liveness.ALIVE);

        long init = Long.parseLong(Files.readString(
                        backend.factory.names().dirs(container(spec)).bundle().resolve(RuncRuntime.BUNDLE_PIDFILE))
                .strip());
        ProcessHandle.of(init).orElseThrow().destroyForcibly();

        await("the sandbox reported gone", SOON, () -> sandbox.liveness() instanceof Liveness.Gone);
        assertThat(sandbox.envd()).isPresent(); // the orchestrator removes it; until then it is a running instance
        sandbox.close();
    }

    @Test
    void liveness_watches_init_and_envd_with_two_pidfds_released_at_pause_and_close() throws Exception {
        long before = pidfds();
        LaunchSpec spec = spec(Map.of());
        SandboxBackend sandbox = backend.fresh(spec);
        assertThat(sandbox.liveness()).isEqualTo(Liveness.ALIVE);
        assertThat(pidfds() - before).as("pidfds while running").isEqualTo(2);

        Path pausedDir = backend.workDir.resolve("artifacts-liveness-" + Long.toHexString(RANDOM.nextLong()));
        io.agentenv.spi.PausedState paused = sandbox.pause(io.agentenv.spi.PauseMode.WITH_MEMORY, pausedDir);
        sandbox.close();
        assertThat(pidfds()).as("pidfds once paused").isEqualTo(before);
        SandboxBackend resumed = backend.factory.prepare(
                spec, new LaunchSource.Paused(backend.factory.decodePausedState(paused.encode(), pausedDir)));
        backend.closeLater(resumed);
        resumed.start(READY);
        assertThat(resumed.liveness()).isEqualTo(Liveness.ALIVE);
        assertThat(pidfds() - before).as("pidfds of the resumed sandbox").isEqualTo(2);

        resumed.close();
        assertThat(pidfds()).as("pidfds once closed").isEqualTo(before);
        FileTrees.deleteTree(pausedDir);
    }

    /** This JVM's open pidfds. */
    private static long pidfds() throws Exception {
        long count = 0;
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals("anon_inode:[pidfd]")) {
                        count++;
                    }
                } catch (java.io.IOException closedMeanwhile) {
                    // not ours to count
                }
            }
        }
        return count;
    }

    @Test
    void envd_killed_in_the_sandbox_comes_back_with_the_same_token_env_and_default_user() throws Exception {
        // given
        LaunchSpec spec = spec(Map.of("GREETING", "hello"));
        SandboxBackend sandbox = backend.fresh(spec);
        assertThat(sandbox.liveness()).isEqualTo(Liveness.ALIVE); // the check notes the envd it runs with
        // when: root inside kills envd (as `sudo kill -9` would)
        backend.exec(spec.id(), "sh", "-c", "kill -9 $(pgrep -x java)");
        // then: the liveness check sees the restarted envd and initialises it again
        await("envd restarted and initialised again", SOON, () -> {
            assertThat(sandbox.liveness()).isEqualTo(Liveness.ALIVE);
            try {
                GuestProcesses.start(
                        sandbox.guest().orElseThrow(),
                        spec.accessToken(),
                        "user",
                        "/bin/sh",
                        List.of("-c", "echo \"$GREETING $(whoami) $(pwd)\" > /tmp/after-restart"));
                return backend.exec(spec.id(), "cat", "/tmp/after-restart").equals("hello user /home/user");
            } catch (Exception notYet) {
                return false;
            }
        });
        assertThatThrownBy(() -> GuestProcesses.start(
                        sandbox.guest().orElseThrow(), new AccessToken("wrong-token"), "user", "true", List.of()))
                .hasMessageContaining("401");
        sandbox.envd().orElseThrow().health();
    }
}
