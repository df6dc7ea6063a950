package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.GuestProcesses;
import io.agentenv.backend.container.lifecycle.ContainerSandbox;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.Liveness;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The warm pool: creates claim ready sandboxes, each at most once, with their own identity; shutdown reaps the rest. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WarmPoolHostTest {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final TemplateId BASE = new TemplateId("base");
    private BackendFixture backend;

    @BeforeEach
    void setUp() throws Exception {
        backend = BackendFixture.create(Map.of("pool_size", "2"));
    }

    @AfterEach
    void tearDown() throws Exception {
        backend.close(); // asserts that shutdown removed the unclaimed members too
    }

    private static LaunchSpec spec() {
        return new LaunchSpec(
                SandboxId.random(RANDOM),
                BASE,
                Map.of("WHO", "claimer"),
                "user",
                new AccessToken("tok-" + RANDOM.nextInt()),
                NetworkPolicy.DEFAULT);
    }

    private void awaitReady(int count) {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
        while (backend.factory.warmPool().readyCount("base") < count) {
            assertThat(Instant.now())
                    .as("the pool has %d ready members in time", count)
                    .isBefore(deadline);
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
    }

    @Test
    void creates_claim_distinct_ready_members_that_take_the_identity_of_their_sandbox() throws Exception {
        awaitReady(2);
        List<SandboxBackend> started = new ArrayList<>();
        List<LaunchSpec> specs = List.of(spec(), spec());
        try {
            for (LaunchSpec spec : specs) {
                SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
                started.add(sandbox);
                sandbox.start(Duration.ofSeconds(60));
            }
            ContainerId first =
                    backend.factory.names().containerFor(specs.get(0).id());
            ContainerId second =
                    backend.factory.names().containerFor(specs.get(1).id());
            assertThat(first).isNotEqualTo(second);
            assertThat(first)
                    .isNotEqualTo(
                            backend.factory.names().containerId(specs.get(0).id())); // the member's, claimed
            assertThat(second)
                    .isNotEqualTo(
                            backend.factory.names().containerId(specs.get(1).id()));
            for (int i = 0; i < specs.size(); i++) {
                LaunchSpec spec = specs.get(i);
                ContainerId container = backend.factory.names().containerFor(spec.id());
                String out = backend.factory
                        .runc()
                        .exec(container, List.of("sh", "-c", "hostname"), Duration.ofSeconds(20))
                        .stdout()
                        .strip();
                assertThat(out).isEqualTo(spec.id().value());
                assertThat(started.get(i).envd().orElseThrow().processes()).isEmpty(); // answers with the new token
            }
        } finally {
            for (SandboxBackend sandbox : started) {
                sandbox.close();
            }
        }
        assertThat(backend.factory.names().containerFor(specs.get(0).id()))
                .isEqualTo(backend.factory.names().containerId(specs.get(0).id()));
        awaitReady(2); // refilled in the background
    }

    @Test
    void a_burst_larger_than_the_pool_grows_it_to_the_bursts_size() throws Exception {
        awaitReady(2);
        List<LaunchSpec> specs = List.of(spec(), spec(), spec(), spec());
        List<SandboxBackend> started = new ArrayList<>();
        try {
            for (LaunchSpec spec : specs) { // 4 creates within a second: 2 claims, 2 restores
                SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
                started.add(sandbox);
            }
            for (SandboxBackend sandbox : started) {
                sandbox.start(Duration.ofSeconds(60));
            }
            assertThat(backend.factory.warmPool().target("base")).isEqualTo(4);
            awaitReady(4); // refilled to the burst's size once it is over
            assertThat(backend.factory.capacity().orElseThrow().warmPool())
                    .singleElement()
                    .satisfies(stock -> {
                        assertThat(stock.ready()).isEqualTo(4);
                        assertThat(stock.target()).isEqualTo(4);
                    });
        } finally {
            for (SandboxBackend sandbox : started) {
                sandbox.close();
            }
        }
    }

    @Test
    void a_claimed_members_log_shows_its_own_initialisation_only() throws Exception {
        awaitReady(1);
        LaunchSpec spec = spec();
        SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
        try {
            sandbox.start(Duration.ofSeconds(60));

            assertThat(backend.factory.names().containerFor(spec.id()))
                    .isNotEqualTo(backend.factory.names().containerId(spec.id()));
            assertThat(sandbox.envd().orElseThrow().logs(0, 1000).entries())
                    .extracting(EnvdLogEntry::message)
                    .filteredOn(message -> message.contains("session initialised"))
                    .singleElement()
                    .asString()
                    .contains("token_set=true")
                    .contains("default_user=user");
        } finally {
            sandbox.close();
        }
    }

    @Test
    void a_member_whose_envd_died_in_the_pool_is_initialised_once_envd_is_restarted() throws Exception {
        // given: a claimed member whose envd (and so the connection the pool kept) is gone
        awaitReady(1);
        LaunchSpec spec = spec();
        SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
        try {
            ContainerId container = ((ContainerSandbox) sandbox).containerId();
            backend.factory.runc().exec(container, List.of("pkill", "-KILL", "-x", "java"), Duration.ofSeconds(20));
            // when
            sandbox.start(Duration.ofSeconds(60));
            // then: the restarted envd has this sandbox's token and identity
            assertThat(sandbox.envd().orElseThrow().processes()).isEmpty();
            assertThat(backend.factory
                            .runc()
                            .exec(container, List.of("sh", "-c", "hostname"), Duration.ofSeconds(20))
                            .stdout()
                            .strip())
                    .isEqualTo(spec.id().value());
        } finally {
            sandbox.close();
        }
    }

    @Test
    void a_claimed_sandbox_is_watched_via_the_members_processes_a_killed_envd_returns() throws Exception {
        awaitReady(1);
        LaunchSpec spec = spec();
        SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
        try {
            sandbox.start(Duration.ofSeconds(60));
            ContainerId container = ((ContainerSandbox) sandbox).containerId();
            assertThat(container).isNotEqualTo(backend.factory.names().containerId(spec.id()));
            assertThat(sandbox.liveness()).isEqualTo(Liveness.ALIVE);
            // when: root inside kills envd after the claim
            backend.factory.runc().exec(container, List.of("pkill", "-KILL", "-x", "java"), Duration.ofSeconds(20));
            // then: a check sees the restarted envd and gives it this sandbox's init (its token answers)
            Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
            while (!initialisedAgain(sandbox, spec, container)) {
                assertThat(Instant.now())
                        .as("envd restarted and initialised again in time")
                        .isBefore(deadline);
                assertThat(sandbox.liveness()).isEqualTo(Liveness.ALIVE);
                LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
            }
        } finally {
            sandbox.close();
        }
    }

    /** envd runs a command with this sandbox's env vars and default user (an uninitialised one has neither). */
    private boolean initialisedAgain(SandboxBackend sandbox, LaunchSpec spec, ContainerId container) {
        try {
            GuestProcesses.start(
                    sandbox.guest().orElseThrow(),
                    spec.accessToken(),
                    "user",
                    "/bin/sh",
                    List.of("-c", "echo \"$WHO $(whoami)\" > /tmp/after-restart"));
            return backend.factory
                    .runc()
                    .exec(container, List.of("cat", "/tmp/after-restart"), Duration.ofSeconds(20))
                    .stdout()
                    .strip()
                    .equals("claimer user");
        } catch (Exception notYet) {
            return false;
        }
    }

    @Test
    void boot_arguments_on_a_claimed_member_boot_it_afresh_in_the_same_network_slot() throws Exception {
        awaitReady(1);
        LaunchSpec spec = spec();
        SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
        try {
            var network = sandbox.hostNetwork();
            sandbox.extraBootArgs("region=eu");
            sandbox.start(Duration.ofSeconds(60));
            assertThat(sandbox.hostNetwork()).isEqualTo(network);
            ContainerId container = backend.factory.names().containerFor(spec.id());
            assertThat(backend.factory
                            .runc()
                            .exec(
                                    container,
                                    List.of("sh", "-c", "tr '\\0' '\\n' < /proc/1/environ"),
                                    Duration.ofSeconds(20))
                            .stdout())
                    .contains("AENV_EXTRA_BOOT_ARGS=region=eu");
        } finally {
            sandbox.close();
        }
    }
}
