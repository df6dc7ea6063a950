package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.GuestProcesses;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.lifecycle.ContainerSandbox;
import io.agentenv.backend.container.lifecycle.InstanceFile;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Reservation;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Warm members made for a sandbox id of their own (the backend has the server's token derivation): a create reserves
 * one and launches a sandbox of its id, whose claim sends no init, sets no hostname and records no claim unless the
 * create asks for env vars or another user.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WarmReservationHostTest {

    private static final TemplateId BASE = new TemplateId("base");
    private static final Duration READY = Duration.ofSeconds(60);
    private BackendFixture backend;

    @BeforeEach
    void setUp() throws Exception {
        backend = BackendFixture.createWithTokens(Map.of("pool_size", "2"));
    }

    @AfterEach
    void tearDown() throws Exception {
        backend.close(); // the leak check: shutdown removed the unclaimed and given-back members too
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

    private static LaunchSpec spec(SandboxId id, Map<String, String> env, String user) {
        return new LaunchSpec(id, BASE, env, user, BackendFixture.token(id), NetworkPolicy.DEFAULT);
    }

    private SandboxBackend claim(LaunchSpec spec) throws Exception {
        SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
        sandbox.start(READY);
        return sandbox;
    }

    /** The pids of the sandbox's java processes (its envd), as {@code pgrep} prints them; empty when none runs. */
    private String envdPids(ContainerId container) {
        try {
            return backend.factory
                    .runc()
                    .exec(container, List.of("sh", "-c", "pgrep -x java || true"), Duration.ofSeconds(20))
                    .stdout()
                    .strip();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs {@code script} in the sandbox through envd as {@code user} with {@code token}; returns what it wrote. */
    private String run(SandboxBackend sandbox, SandboxId id, AccessToken token, String user, String script)
            throws Exception {
        Path out = Path.of("/tmp/out-" + System.nanoTime());
        GuestProcesses.start(
                sandbox.guest().orElseThrow(), token, user, "/bin/sh", List.of("-c", script + " > " + out));
        Instant deadline = Instant.now().plus(Duration.ofSeconds(20));
        while (true) {
            String text = backend.exec(id, "sh", "-c", "cat " + out + " 2>/dev/null || true");
            if (!text.isEmpty()) {
                return text;
            }
            assertThat(Instant.now()).as("the command wrote its output in time").isBefore(deadline);
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
    }

    @Test
    void a_reserved_member_runs_its_ids_sandbox_and_its_envd_answers_that_token_only() throws Exception {
        awaitReady(1);
        Reservation reservation = backend.factory.reserve(BASE).orElseThrow();
        SandboxId id = reservation.id();
        SandboxBackend sandbox = claim(spec(id, Map.of(), "user"));
        try {
            reservation.close(); // taken by prepare: nothing to give back

            // the container is the sandbox's own, named and identified for it when the member was made
            assertThat(((ContainerSandbox) sandbox).containerId())
                    .isEqualTo(backend.factory.names().containerId(id));
            assertThat(backend.factory.names().claimsDir().resolve(id.value())).doesNotExist();
            assertThat(backend.factory.names().containerFor(id))
                    .isEqualTo(backend.factory.names().containerId(id));
            assertThat(backend.exec(id, "hostname")).isEqualTo(id.value());
            assertThat(InstanceFile.read(
                            backend.factory.names().dirs(backend.factory.names().containerId(id))))
                    .isPresent();
            // envd has this sandbox's token, default user and workdir, from one init
            assertThat(run(sandbox, id, BackendFixture.token(id), "user", "echo \"$(whoami) $(pwd)\""))
                    .isEqualTo("user /home/user");
            assertThatThrownBy(() -> GuestProcesses.start(
                            sandbox.guest().orElseThrow(),
                            new AccessToken("tok-other"),
                            "user",
                            "/bin/true",
                            List.of()))
                    .hasMessageContaining("401");
            assertThat(sandbox.envd().orElseThrow().logs(0, 1000).entries())
                    .extracting(EnvdLogEntry::message)
                    .filteredOn(message -> message.contains("session initialised"))
                    .singleElement()
                    .asString()
                    .contains("token_set=true")
                    .contains("default_user=user");
            // and it is never proposed again
            awaitReady(2);
            List<Reservation> next = List.of(
                    backend.factory.reserve(BASE).orElseThrow(),
                    backend.factory.reserve(BASE).orElseThrow());
            assertThat(next).extracting(Reservation::id).doesNotContain(id);
            next.forEach(Reservation::close);
        } finally {
            sandbox.close();
        }
        assertThat(backend.factory.runc().state(backend.factory.names().containerId(id)))
                .isEmpty();
    }

    @Test
    void a_reserved_member_created_with_env_vars_or_as_root_gets_them_at_its_claim() throws Exception {
        awaitReady(2);
        Reservation first = backend.factory.reserve(BASE).orElseThrow();
        Reservation second = backend.factory.reserve(BASE).orElseThrow();
        List<SandboxBackend> started = new ArrayList<>();
        try {
            SandboxBackend withEnv = claim(spec(first.id(), Map.of("WHO", "claimer"), "user"));
            started.add(withEnv);
            SandboxBackend asRoot = claim(spec(second.id(), Map.of(), "root"));
            started.add(asRoot);

            assertThat(run(withEnv, first.id(), BackendFixture.token(first.id()), "user", "echo \"$WHO $(whoami)\""))
                    .isEqualTo("claimer user");
            // the member's init (user) and the claim's (root): envd's default user is root now
            assertThat(asRoot.envd().orElseThrow().logs(0, 1000).entries())
                    .extracting(EnvdLogEntry::message)
                    .filteredOn(message -> message.contains("session initialised"))
                    .last()
                    .asString()
                    .contains("default_user=root");
            assertThat(run(asRoot, second.id(), BackendFixture.token(second.id()), "root", "whoami"))
                    .isEqualTo("root");
            assertThat(backend.exec(second.id(), "hostname"))
                    .isEqualTo(second.id().value());
        } finally {
            first.close();
            second.close();
            for (SandboxBackend sandbox : started) {
                sandbox.close();
            }
        }
    }

    @Test
    void a_reserved_member_whose_envd_died_in_the_pool_gets_its_init_at_the_claim() throws Exception {
        // given: the member's envd (initialised by the pool) killed; its supervisor starts one without an init
        awaitReady(1);
        Reservation reservation = backend.factory.reserve(BASE).orElseThrow();
        SandboxId id = reservation.id();
        ContainerId container = backend.factory.names().containerId(id);
        String killed = envdPids(container);
        backend.factory.runc().exec(container, List.of("pkill", "-KILL", "-x", "java"), Duration.ofSeconds(20));
        // the envd is gone (its exit seen), not only signalled: a claim racing its exit would still find it running
        HostFixture.await(
                "the killed envd has exited",
                Duration.ofSeconds(20),
                () -> !envdPids(container).equals(killed));
        // when
        SandboxBackend sandbox = claim(spec(id, Map.of(), "user"));
        try {
            // then: the new envd has this sandbox's token and default user
            assertThat(run(sandbox, id, BackendFixture.token(id), "user", "whoami"))
                    .isEqualTo("user");
            assertThatThrownBy(() -> GuestProcesses.start(
                            sandbox.guest().orElseThrow(),
                            new AccessToken("tok-other"),
                            "user",
                            "/bin/true",
                            List.of()))
                    .hasMessageContaining("401");
        } finally {
            reservation.close();
            sandbox.close();
        }
    }

    @Test
    void a_reservation_given_back_unused_is_proposed_again_first() throws Exception {
        awaitReady(2);
        Reservation reservation = backend.factory.reserve(BASE).orElseThrow();
        SandboxId id = reservation.id();

        reservation.close();
        reservation.close(); // idempotent

        Reservation again = backend.factory.reserve(BASE).orElseThrow();
        try {
            assertThat(again.id()).isEqualTo(id);
        } finally {
            again.close();
        }
        assertThat(backend.factory.warmPool().readyCount("base")).isEqualTo(2);
    }

    @Test
    void a_claimed_reserved_member_pauses_and_resumes_into_its_own_container() throws Exception {
        awaitReady(1);
        Reservation reservation = backend.factory.reserve(BASE).orElseThrow();
        LaunchSpec spec = spec(reservation.id(), Map.of(), "user");
        SandboxBackend sandbox = claim(spec);
        Path dir = backend.workDir.resolve("artifacts-" + spec.id());
        SandboxBackend resumed = null;
        try {
            backend.exec(spec.id(), "sh", "-c", "echo kept > /tmp/mark");
            byte[] paused = sandbox.pause(PauseMode.WITH_MEMORY, dir).encode();
            sandbox.close();

            resumed = backend.factory.prepare(
                    spec, new LaunchSource.Paused(backend.factory.decodePausedState(paused, dir)));
            resumed.start(READY);

            assertThat(backend.exec(spec.id(), "cat", "/tmp/mark")).isEqualTo("kept");
            assertThat(backend.exec(spec.id(), "hostname")).isEqualTo(spec.id().value());
            assertThat(resumed.envd().orElseThrow().processes()).isEmpty(); // answers with the sandbox's token
        } finally {
            reservation.close();
            sandbox.close();
            if (resumed != null) {
                resumed.close();
            }
            FileTrees.deleteTree(dir);
        }
    }

    @Test
    void after_a_restart_claimed_members_reattach_without_claim_records_others_are_reaped() throws Exception {
        // given: a claimed member and a full pool (its refill idle), then the backend dies
        awaitReady(1);
        Reservation reservation = backend.factory.reserve(BASE).orElseThrow();
        LaunchSpec spec = spec(reservation.id(), Map.of(), "user");
        claim(spec);
        reservation.close();
        awaitReady(2);
        List<ContainerId> unclaimed = backend.factory.runc().list().stream()
                .filter(c -> c.value().startsWith(backend.idPrefix)
                        && !c.equals(backend.factory.names().containerId(spec.id())))
                .toList();
        assertThat(unclaimed).hasSize(2);

        // when a new backend starts on the same host and work dir, and the server still runs only the claimed one
        ContainerBackendFactory restarted = backend.restarted();
        Optional<SandboxBackend> reattached = Optional.empty();
        try {
            reattached = restarted.reattach(spec);
            restarted.reapUnclaimed(Set.of(spec.id()));

            // then it runs on with its token, and the members no one claimed are gone
            assertThat(reattached).isPresent();
            assertThat(((ContainerSandbox) reattached.get()).containerId())
                    .isEqualTo(backend.factory.names().containerId(spec.id()));
            assertThat(reattached.get().envd().orElseThrow().processes()).isEmpty();
            for (ContainerId member : unclaimed) {
                assertThat(backend.factory.runc().state(member))
                        .as("unclaimed member %s", member)
                        .isEmpty();
                assertThat(Files.exists(backend.factory.names().dirs(member).dir()))
                        .isFalse();
            }
        } finally {
            if (reattached.isPresent()) {
                reattached.get().close();
            }
            restarted.shutdown();
        }
    }

    @Test
    void a_snapshot_is_kept_warm_from_its_first_create_until_deleted(@TempDir Path dir) throws Exception {
        // a snapshot of a sandbox with a file of its own
        awaitReady(1);
        SandboxId sourceId = backend.factory.reserve(BASE).orElseThrow().id();
        SandboxBackend source = claim(spec(sourceId, Map.of(), "user"));
        SnapshotState snapshot;
        try {
            backend.exec(sourceId, "sh", "-c", "echo kept > /home/user/snap.txt");
            snapshot = source.snapshot(Files.createDirectories(dir.resolve("snapshot")));
        } finally {
            source.close();
        }
        TemplateId snapshotId = new TemplateId("snapwarm" + System.nanoTime());

        // the first create keeps it warm (nothing is ready yet); then a reserved restore starts as its own sandbox
        Map<String, String> templateEnv = Map.of("TEMPLATE_ENV", "from the template");
        assertThat(backend.factory.reserve(snapshotId, snapshot, templateEnv, "user", Optional.empty()))
                .isEmpty();
        Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
        while (backend.factory.warmPool().readyCount(snapshotId.value()) < 1) {
            assertThat(Instant.now())
                    .as("a restore of the snapshot is ready in time")
                    .isBefore(deadline);
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
        Reservation reservation = backend.factory
                .reserve(snapshotId, snapshot, templateEnv, "user", Optional.empty())
                .orElseThrow();
        SandboxId id = reservation.id();
        SandboxBackend sandbox = backend.factory.prepare(
                new LaunchSpec(id, snapshotId, templateEnv, "user", BackendFixture.token(id), NetworkPolicy.DEFAULT),
                new LaunchSource.Snapshot(snapshot));
        try {
            sandbox.start(READY);
            reservation.close();

            assertThat(backend.exec(id, "cat", "/home/user/snap.txt")).isEqualTo("kept");
            assertThat(run(sandbox, id, BackendFixture.token(id), "user", "echo \"$(whoami) $TEMPLATE_ENV\""))
                    .isEqualTo("user from the template");
            // the member was initialised with what this create asks for: the claim sent no init of its own
            assertThat(sandbox.envd().orElseThrow().logs(0, 1000).entries())
                    .extracting(EnvdLogEntry::message)
                    .filteredOn(message -> message.contains("session initialised") && message.contains("env_vars=1"))
                    .hasSize(1);
        } finally {
            sandbox.close();
        }

        // deleted: its ready restores go, and it is not kept any more
        backend.factory.snapshotDeleted(snapshotId);
        assertThat(backend.factory.warmPool().readyCount(snapshotId.value())).isZero();
        assertThat(backend.factory.warmPool().keepsSnapshot(snapshotId.value())).isFalse();
    }
}
