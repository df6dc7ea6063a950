package io.agentenv.server.container;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.orchestrator.CreateSandbox;
import io.agentenv.orchestrator.ForkResult;
import io.agentenv.orchestrator.PauseOutcome;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxView;
import io.agentenv.orchestrator.SnapshotView;
import io.agentenv.orchestrator.TimeoutAction;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The orchestrator with the real container backend (what {@code scripts/serve.sh} runs): sandboxes created, paused,
 * resumed, captured, forked and recovered after a restart, with commands run through envd as the SDK runs them, and a
 * leak check after every test.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerOrchestratorHostTest {

    private static final Duration TTL = Duration.ofMinutes(5);
    private static ContainerServerFixture server;
    private final List<SandboxId> created = new ArrayList<>();

    @BeforeAll
    static void startServer() throws Exception {
        server = ContainerServerFixture.create();
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void killEverythingAndCheckForLeaks() throws Exception {
        for (SandboxId id : created) {
            try {
                server.orchestrator.kill(id);
            } catch (RuntimeException alreadyGone) {
                // killed by the test itself
            }
        }
        server.assertNothingLeaked();
    }

    private SandboxView create(CreateSandbox request) {
        SandboxView view = server.orchestrator.create(request);
        created.add(view.id());
        return view;
    }

    private SandboxView create(String template) {
        return create(CreateSandbox.of(template, TTL));
    }

    private static GuestEndpoint guest(SandboxId id) {
        return server.orchestrator.guestEndpoint(id).orElseThrow();
    }

    private static String run(SandboxId id, String script) throws Exception {
        GuestCommands.Result result = GuestCommands.run(id, guest(id), ContainerServerFixture.token(id), script);
        assertThat(result.exitCode())
                .as("exit code of `%s` (output %s)", script, result.stdout())
                .isZero();
        return result.stdout();
    }

    private static long background(SandboxId id) throws Exception {
        return GuestCommands.background(id, guest(id), ContainerServerFixture.token(id), "sleep 100000");
    }

    @Test
    void a_new_sandbox_runs_commands_as_the_default_user_with_env_and_reports_resources() throws Exception {
        SandboxView view = create(new CreateSandbox(
                "base",
                TTL,
                TimeoutAction.KILL,
                PauseMode.WITH_MEMORY,
                false,
                Map.of("GREETING", "hello"),
                Map.of(),
                NetworkPolicy.DEFAULT,
                "{}",
                true,
                Optional.empty(),
                List.of()));

        assertThat(view.state()).isEqualTo(SandboxState.RUNNING);
        assertThat(run(view.id(), "echo $GREETING $(whoami) $(pwd) $(hostname)"))
                .isEqualTo("hello user /home/user " + view.id().value());
        assertThat(run(view.id(), "sudo -n id -u")).isEqualTo("0");
        assertThat(run(view.id(), "ls /work /var/cache/agentenv 2>/dev/null | wc -l"))
                .isEqualTo("0");
        assertThat(view.resources().cpuCount()).isEqualTo(1);
        assertThat(view.resources().memoryMiB()).isEqualTo(256);
        assertThat(view.resources().diskSizeMiB()).isPositive();
    }

    @Test
    void pause_and_resume_keep_a_background_process_with_the_same_pid_and_the_files() throws Exception {
        SandboxId id = create("base").id();
        long pid = background(id);
        run(id, "echo kept > ~/note");

        assertThat(server.orchestrator.pause(id, PauseMode.WITH_MEMORY)).isEqualTo(PauseOutcome.PAUSED);
        assertThat(server.orchestrator.get(id).state()).isEqualTo(SandboxState.PAUSED);
        assertThat(server.orchestrator.guestEndpoint(id)).isEmpty();
        server.orchestrator.resume(id, TTL);

        assertThat(run(id, "cat /proc/" + pid + "/comm; cat ~/note")).isEqualTo("sleep\nkept");
    }

    @Test
    void a_snapshot_starts_new_sandboxes_with_its_files_and_processes() throws Exception {
        SandboxId source = create("base").id();
        long pid = background(source);
        run(source, "echo captured > ~/state");

        SnapshotView snapshot = server.orchestrator.snapshot(source, Optional.of("with-state"));
        run(source, "echo later > ~/state");
        SandboxId copy = create(snapshot.id().value()).id();

        assertThat(run(copy, "cat ~/state; cat /proc/" + pid + "/comm")).isEqualTo("captured\nsleep");
        assertThat(run(source, "cat ~/state")).isEqualTo("later");
        server.orchestrator.kill(copy);
        assertThat(server.orchestrator.deleteTemplate(snapshot.id().value())).isTrue();
    }

    @Test
    void three_forked_children_diverge_independently_of_each_other_and_of_the_source() throws Exception {
        SandboxId source = create("base").id();
        run(source, "echo source > ~/who");

        List<ForkResult> children = server.orchestrator.fork(source, 3, Optional.empty());

        List<SandboxId> ids = new ArrayList<>();
        for (ForkResult child : children) {
            assertThat(child).isInstanceOf(ForkResult.Child.class);
            ids.add(((ForkResult.Child) child).sandbox().id());
        }
        created.addAll(ids);
        for (SandboxId id : ids) {
            assertThat(run(id, "cat ~/who")).isEqualTo("source");
            run(id, "echo " + id.value() + " > ~/who");
        }
        for (SandboxId id : ids) {
            assertThat(run(id, "cat ~/who; hostname")).isEqualTo(id.value() + "\n" + id.value());
        }
        assertThat(run(source, "cat ~/who")).isEqualTo("source");
        assertThat(ids.stream().map(id -> guest(id).host()).distinct()).hasSize(3);
    }

    @Test
    void without_internet_access_connections_out_are_refused_and_sandboxes_are_isolated() throws Exception {
        SandboxId closed = create(new CreateSandbox(
                        "base",
                        TTL,
                        TimeoutAction.KILL,
                        PauseMode.WITH_MEMORY,
                        false,
                        Map.of(),
                        Map.of(),
                        new NetworkPolicy(
                                NetworkPolicy.InternetAccess.DENIED,
                                List.of(),
                                List.of(),
                                NetworkPolicy.PublicTraffic.ALLOWED),
                        "{}",
                        true,
                        Optional.empty(),
                        List.of()))
                .id();
        SandboxId other = create("base").id();
        String probe = "timeout 3 bash -c 'echo > /dev/tcp/%s/%d' 2>/dev/null && echo open || echo blocked";

        assertThat(run(closed, probe.formatted("203.0.113.9", 80))).isEqualTo("blocked");
        assertThat(run(other, probe.formatted(guest(closed).host(), 49983))).isEqualTo("blocked");
        server.orchestrator.updateNetwork(closed, NetworkPolicy.DEFAULT);
        assertThat(server.orchestrator.get(closed).network()).isEqualTo(NetworkPolicy.DEFAULT);
    }

    @Test
    void after_a_restart_running_sandboxes_are_reattached_and_paused_ones_resume() throws Exception {
        SandboxId running = create("base").id();
        SandboxId paused = create("base").id();
        long runningPid = background(running);
        long pausedPid = background(paused);
        server.orchestrator.pause(paused, PauseMode.WITH_MEMORY);

        server.restart();

        assertThat(server.orchestrator.get(running).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(run(running, "cat /proc/" + runningPid + "/comm")).isEqualTo("sleep");
        assertThat(server.orchestrator.get(paused).state()).isEqualTo(SandboxState.PAUSED);
        server.orchestrator.resume(paused, TTL);
        assertThat(run(paused, "cat /proc/" + pausedPid + "/comm")).isEqualTo("sleep");
    }
}
