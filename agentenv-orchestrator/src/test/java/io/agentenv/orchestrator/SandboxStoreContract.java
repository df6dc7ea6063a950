package io.agentenv.orchestrator;

import static io.agentenv.orchestrator.SandboxState.KILLING;
import static io.agentenv.orchestrator.SandboxState.PAUSED;
import static io.agentenv.orchestrator.SandboxState.PAUSING;
import static io.agentenv.orchestrator.SandboxState.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link SandboxStore} owes the orchestrator, as one abstract test: extend it once per store (the SQLite
 * store, and {@link MemorySandboxStore}, which the orchestrator's own tests run on, so the two cannot drift apart).
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
public abstract class SandboxStoreContract {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00.123456789Z");

    @TempDir
    protected Path dir;

    protected SandboxStore store;

    /** A store on {@code dir}; opening the same directory again after a close is a restart on the same data. */
    protected abstract SandboxStore open(Path dir);

    @BeforeEach
    void openStore() {
        store = open(dir);
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    /** Closes the store and opens it again on the same data, as a restart does. */
    protected final SandboxStore reopen() {
        store.close();
        return open(dir);
    }

    @Test
    void an_insert_of_an_existing_id_fails_and_changes_nothing() {
        // given
        SandboxRecord record = record(RUNNING, T0);
        store.insert(record);
        // when / then
        assertThatThrownBy(() -> store.insert(record.withState(PAUSED))).isInstanceOf(StoreException.class);
        assertThat(store.all()).containsExactly(record);
    }

    @Test
    void a_record_round_trips_with_every_field_intact() {
        // given
        SandboxRecord record = record(RUNNING, T0)
                .withPaused(Optional.of(new StoredState(new byte[] {1, 2, 3}, dir.resolve("a"))))
                .withNetwork(new NetworkPolicy(
                        NetworkPolicy.InternetAccess.DENIED,
                        List.of("10.0.0.0/8"),
                        List.of("1.1.1.1"),
                        NetworkPolicy.PublicTraffic.TOKEN_REQUIRED));
        // when
        store.insert(record);
        // then
        assertThat(store.get(record.id())).contains(record);
    }

    @Test
    void transition_succeeds_only_from_an_expected_state() {
        // given
        SandboxRecord record = record(RUNNING, T0);
        store.insert(record);
        // when / then
        assertThat(store.transition(record.id(), EnumSet.of(PAUSED), KILLING)).isFalse();
        assertThat(store.transition(record.id(), EnumSet.of(RUNNING, PAUSED), PAUSING))
                .isTrue();
        assertThat(store.transition(record.id(), EnumSet.of(RUNNING), PAUSING)).isFalse();
        assertThat(store.get(record.id()).orElseThrow().state()).isEqualTo(PAUSING);
        assertThat(store.transition(SandboxId.random(RANDOM), EnumSet.allOf(SandboxState.class), KILLING))
                .isFalse();
    }

    @Test
    void replace_and_delete_are_conditional_on_the_state() {
        // given
        SandboxRecord record = record(PAUSING, T0);
        store.insert(record);
        SandboxRecord paused = record.withState(PAUSED).withMetadata(Map.of("k", "v2"));
        // when / then
        assertThat(store.replace(paused, EnumSet.of(RUNNING))).isFalse();
        assertThat(store.replace(paused, EnumSet.of(PAUSING))).isTrue();
        assertThat(store.get(record.id())).contains(paused);
        assertThat(store.delete(record.id(), EnumSet.of(RUNNING))).isFalse();
        assertThat(store.delete(record.id(), EnumSet.of(PAUSED))).isTrue();
        assertThat(store.get(record.id())).isEmpty();
    }

    @Test
    void narrow_updates_touch_only_their_columns() {
        // given
        SandboxRecord record = record(RUNNING, T0);
        store.insert(record);
        NetworkPolicy policy = new NetworkPolicy(
                NetworkPolicy.InternetAccess.ALLOWED,
                List.of(),
                List.of("8.8.8.8"),
                NetworkPolicy.PublicTraffic.ALLOWED);
        // when
        boolean ttl = store.updateTtl(
                record.id(), EnumSet.of(RUNNING), Duration.ofSeconds(9), Optional.of(T0.plusSeconds(9)));
        boolean net = store.updateNetwork(record.id(), EnumSet.of(RUNNING), policy);
        boolean wrongState = store.updateTtl(record.id(), EnumSet.of(PAUSED), Duration.ZERO, Optional.empty());
        // then
        assertThat(ttl).isTrue();
        assertThat(net).isTrue();
        assertThat(wrongState).isFalse();
        assertThat(store.get(record.id()))
                .contains(record.withTtl(Duration.ofSeconds(9), Optional.of(T0.plusSeconds(9)))
                        .withNetwork(policy));
    }

    @Test
    void instance_id_and_extension_params_round_trip_and_params_have_a_narrow_update() {
        // given
        UUID instance = UUID.fromString("01939b6e-7a3c-7def-8abc-0123456789ab");
        SandboxRecord record =
                record(RUNNING, T0).withInstanceId(instance).withCustomExtensionParams("{\"vpn\":\"eu\"}");
        store.insert(record);
        store.updateTtl(record.id(), EnumSet.of(RUNNING), Duration.ofSeconds(7), Optional.empty());
        // when
        boolean wrongState = store.updateCustomExtensionParams(record.id(), EnumSet.of(PAUSED), "{\"x\":1}");
        boolean updated = store.updateCustomExtensionParams(record.id(), EnumSet.of(RUNNING), "{\"vpn\":\"us\"}");
        // then
        assertThat(wrongState).isFalse();
        assertThat(updated).isTrue();
        assertThat(store.get(record.id()))
                .contains(record.withTtl(Duration.ofSeconds(7), Optional.empty())
                        .withCustomExtensionParams("{\"vpn\":\"us\"}"));
        assertThat(store.get(record.id()).orElseThrow().instanceId()).contains(instance);
    }

    @Test
    void a_snapshot_keeps_the_custom_extension_params_of_its_source() {
        // given
        SnapshotRecord snapshot = new SnapshotRecord(
                new TemplateId("snapwithparams000001"),
                List.of(),
                Optional.empty(),
                new TemplateId("base"),
                Map.of(),
                new Resources(2, 512, 1024),
                new StoredState(new byte[] {9}, dir.resolve("s")),
                T0,
                T0,
                "{\"fw\":[22]}",
                GuestDefaults.NONE,
                List.of());
        // when
        store.insertSnapshot(snapshot);
        // then
        assertThat(store.findSnapshot("snapwithparams000001").orElseThrow().customExtensionParams())
                .isEqualTo("{\"fw\":[22]}");
    }

    @Test
    void a_template_user_and_workdir_round_trip_with_snapshot_and_sandbox() {
        // given a template's snapshot and a sandbox created from it, both with a default user and workdir
        GuestDefaults defaults = new GuestDefaults(Optional.of("app"), Optional.of("/srv/app"));
        SnapshotRecord snapshot = new SnapshotRecord(
                new TemplateId("snapwithdefaults0001"),
                List.of("with-defaults"),
                Optional.empty(),
                new TemplateId("base"),
                Map.of(),
                new Resources(2, 512, 1024),
                new StoredState(new byte[] {9}, dir.resolve("s")),
                T0,
                T0,
                "{}",
                defaults,
                List.of());
        SandboxRecord plain = record(RUNNING, T0);
        SandboxRecord sandbox = plain.forChild(plain.id(), T0, plain.timeout(), RUNNING);
        SandboxRecord withDefaults = sandbox.toBuilder()
                .guestDefaults(new GuestDefaults(Optional.empty(), Optional.of("/data")))
                .build();
        // when
        store.insertSnapshot(snapshot);
        store.insert(withDefaults);
        // then
        assertThat(store.findSnapshot("with-defaults").orElseThrow().guestDefaults())
                .isEqualTo(defaults);
        assertThat(store.get(withDefaults.id()).orElseThrow().guestDefaults())
                .isEqualTo(new GuestDefaults(Optional.empty(), Optional.of("/data")));
        assertThat(store.get(withDefaults.id()).orElseThrow().withState(PAUSED).guestDefaults())
                .isEqualTo(withDefaults.guestDefaults());
    }

    @Test
    void volume_mounts_round_trip_and_name_the_sandboxes_that_mount_a_volume() {
        // given a snapshot and two sandboxes, one mounting two volumes
        List<VolumeAttachment> volumes = List.of(
                new VolumeAttachment("vol00000000000000001", "data", "/data", false),
                new VolumeAttachment("vol00000000000000002", "models", "/home/user/m", true));
        SnapshotRecord snapshot = new SnapshotRecord(
                new TemplateId("snapwithvolumes00001"),
                List.of("with-volumes"),
                Optional.empty(),
                new TemplateId("base"),
                Map.of(),
                new Resources(2, 512, 1024),
                new StoredState(new byte[] {9}, dir.resolve("s")),
                T0,
                T0,
                "{}",
                GuestDefaults.NONE,
                volumes);
        SandboxRecord plain = record(RUNNING, T0);
        SandboxRecord other = record(RUNNING, T0.plusSeconds(1));
        SandboxRecord mounting = plain.forChild(plain.id(), T0, plain.timeout(), RUNNING);
        mounting = new SandboxRecord(
                mounting.id(),
                mounting.template(),
                mounting.alias(),
                mounting.state(),
                mounting.startedAt(),
                mounting.timeout(),
                mounting.expiresAt(),
                mounting.onTimeout(),
                mounting.timeoutPauseMode(),
                mounting.autoResume(),
                mounting.secure(),
                mounting.resources(),
                mounting.metadata(),
                mounting.envVars(),
                mounting.network(),
                mounting.customExtensionParams(),
                mounting.paused(),
                mounting.instanceId(),
                mounting.maskRequestHost(),
                mounting.guestDefaults(),
                volumes);
        // when
        store.insertSnapshot(snapshot);
        store.insert(mounting);
        store.insert(other);
        // then
        assertThat(store.findSnapshot("with-volumes").orElseThrow().volumes()).isEqualTo(volumes);
        assertThat(store.get(mounting.id()).orElseThrow().volumes()).isEqualTo(volumes);
        assertThat(store.get(other.id()).orElseThrow().volumes()).isEmpty();
        assertThat(store.mounting("vol00000000000000002")).containsExactly(mounting.id());
        assertThat(store.mounting("vol00000000000000003")).isEmpty();
        assertThat(store.replace(mounting.withState(PAUSED), EnumSet.of(RUNNING)))
                .isTrue();
        assertThat(store.get(mounting.id()).orElseThrow().volumes()).isEqualTo(volumes);
        assertThat(store.delete(mounting.id(), EnumSet.of(PAUSED))).isTrue();
        assertThat(store.mounting("vol00000000000000001")).isEmpty();
    }

    @Test
    void list_expired_returns_only_running_sandboxes_at_or_past_their_deadline() {
        // given
        SandboxRecord due = record(RUNNING, T0).withTtl(Duration.ofSeconds(1), Optional.of(T0.plusSeconds(1)));
        SandboxRecord later = record(RUNNING, T0).withTtl(Duration.ofSeconds(5), Optional.of(T0.plusSeconds(5)));
        SandboxRecord pausedPastDeadline =
                record(PAUSED, T0).withTtl(Duration.ofSeconds(1), Optional.of(T0.plusSeconds(1)));
        List.of(due, later, pausedPastDeadline).forEach(store::insert);
        // when / then
        assertThat(store.listExpired(T0.plusSeconds(1))).containsExactly(due.id());
        assertThat(store.listExpired(T0)).isEmpty();
    }

    @Test
    void ids_in_a_state_are_read_in_one_call_and_follow_transitions() {
        // given
        SandboxRecord first = record(RUNNING, T0);
        SandboxRecord second = record(RUNNING, T0.plusSeconds(1));
        SandboxRecord paused = record(PAUSED, T0);
        List.of(first, second, paused).forEach(store::insert);
        // when
        store.transition(second.id(), EnumSet.of(RUNNING), PAUSED);
        // then
        assertThat(store.idsIn(RUNNING)).containsExactly(first.id());
        assertThat(store.idsIn(PAUSED)).containsExactlyInAnyOrder(second.id(), paused.id());
        assertThat(store.idsIn(SandboxState.KILLING)).isEmpty();
    }

    @Test
    void list_pages_newest_first_without_gaps_or_duplicates_and_signals_the_end() {
        // given: five sandboxes, two sharing a start time
        List<SandboxRecord> records = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            records.add(record(RUNNING, T0.plusSeconds(i == 4 ? 3 : i)));
        }
        records.forEach(store::insert);
        // when
        List<SandboxId> seen = new ArrayList<>();
        Optional<Cursor> cursor = Optional.empty();
        int pages = 0;
        do {
            Page<SandboxRecord> page = store.list(new SandboxQuery(
                    EnumSet.of(RUNNING), Map.of(), Optional.empty(), Optional.empty(), SortOrder.DESC, 2, cursor));
            page.items().forEach(r -> seen.add(r.id()));
            cursor = page.next();
            pages++;
        } while (cursor.isPresent());
        // then
        assertThat(pages).isEqualTo(3);
        assertThat(seen)
                .containsExactlyElementsOf(records.stream()
                        .sorted((a, b) -> {
                            int byTime = b.startedAt().compareTo(a.startedAt());
                            return byTime != 0 ? byTime : b.id().value().compareTo(a.id().value());
                        })
                        .map(SandboxRecord::id)
                        .toList());
    }

    @Test
    void a_page_that_exhausts_the_results_has_no_next_cursor() {
        // given
        store.insert(record(RUNNING, T0));
        store.insert(record(RUNNING, T0.plusSeconds(1)));
        // when
        Page<SandboxRecord> first = store.list(query(1, Map.of()));
        Page<SandboxRecord> second = store.list(new SandboxQuery(
                EnumSet.of(RUNNING), Map.of(), Optional.empty(), Optional.empty(), SortOrder.DESC, 1, first.next()));
        // then
        assertThat(first.next()).isPresent();
        assertThat(second.items()).hasSize(1);
        assertThat(second.next()).isEmpty();
    }

    @Test
    void list_filters_by_state_metadata_template_and_start_time() {
        // given
        SandboxRecord match = record(RUNNING, T0.plusSeconds(10)).withMetadata(Map.of("a", "b c", "x", "y"));
        SandboxRecord otherValue = record(RUNNING, T0.plusSeconds(10)).withMetadata(Map.of("a", "other"));
        SandboxRecord paused = record(PAUSED, T0.plusSeconds(10)).withMetadata(Map.of("a", "b c"));
        SandboxRecord early = record(RUNNING, T0).withMetadata(Map.of("a", "b c"));
        List.of(match, otherValue, paused, early).forEach(store::insert);
        // when
        List<SandboxId> found = store
                .list(new SandboxQuery(
                        EnumSet.of(RUNNING),
                        Map.of("a", "b c"),
                        Optional.of("base"),
                        Optional.of(T0.plusSeconds(10)),
                        SortOrder.ASC,
                        100,
                        Optional.empty()))
                .items()
                .stream()
                .map(SandboxRecord::id)
                .toList();
        // then
        assertThat(found).containsExactly(match.id());
        assertThat(store.list(query(100, Map.of("a", "b c", "x", "y"))).items())
                .extracting(SandboxRecord::id)
                .containsExactly(match.id());
        assertThat(store.list(new SandboxQuery(
                                EnumSet.of(RUNNING),
                                Map.of(),
                                Optional.of("nope"),
                                Optional.empty(),
                                SortOrder.DESC,
                                100,
                                Optional.empty()))
                        .items())
                .isEmpty();
    }

    @Test
    void a_started_after_bound_far_in_the_future_or_past_is_clamped_not_an_error() {
        // given
        SandboxRecord record = record(RUNNING, T0);
        store.insert(record);
        // when / then
        assertThat(store.list(new SandboxQuery(
                                EnumSet.of(RUNNING),
                                Map.of(),
                                Optional.empty(),
                                Optional.of(Instant.parse("+100000-01-01T00:00:00Z")),
                                SortOrder.DESC,
                                10,
                                Optional.empty()))
                        .items())
                .isEmpty();
        assertThat(store.list(new SandboxQuery(
                                EnumSet.of(RUNNING),
                                Map.of(),
                                Optional.empty(),
                                Optional.of(Instant.parse("-100000-01-01T00:00:00Z")),
                                SortOrder.DESC,
                                10,
                                Optional.empty()))
                        .items())
                .extracting(SandboxRecord::id)
                .containsExactly(record.id());
    }

    @Test
    void a_snapshot_alias_moves_to_the_newest_snapshot_with_that_name() {
        // given
        SnapshotRecord first = snapshot("first", List.of("mine"), T0);
        SnapshotRecord second = snapshot("second", List.of("mine"), T0.plusSeconds(1));
        store.insertSnapshot(first);
        // when
        store.insertSnapshot(second);
        // then
        assertThat(store.findSnapshot("mine")).map(SnapshotRecord::id).contains(second.id());
        assertThat(store.findSnapshot("first")).map(SnapshotRecord::aliases).contains(List.of());
        assertThat(store.findSnapshot("second")).contains(second);
    }

    @Test
    void snapshots_list_newest_first_filtered_by_source_and_name_and_delete_drops_aliases() {
        // given
        SandboxId source = SandboxId.random(RANDOM);
        SnapshotRecord a = snapshot("snapa", List.of(), T0).withSource(source);
        SnapshotRecord b =
                snapshot("snapb", List.of("named"), T0.plusSeconds(1)).withSource(source);
        SnapshotRecord c = snapshot("snapc", List.of(), T0.plusSeconds(2));
        List.of(a, b, c).forEach(store::insertSnapshot);
        // when
        Page<SnapshotRecord> bySource =
                store.listSnapshots(new SnapshotQuery(Optional.of(source), Optional.empty(), 1, Optional.empty()));
        Page<SnapshotRecord> rest =
                store.listSnapshots(new SnapshotQuery(Optional.of(source), Optional.empty(), 1, bySource.next()));
        // then
        assertThat(bySource.items()).extracting(SnapshotRecord::id).containsExactly(b.id());
        assertThat(rest.items()).extracting(SnapshotRecord::id).containsExactly(a.id());
        assertThat(rest.next()).isEmpty();
        assertThat(store.listSnapshots(new SnapshotQuery(Optional.empty(), Optional.of("named"), 10, Optional.empty()))
                        .items())
                .extracting(SnapshotRecord::id)
                .containsExactly(b.id());
        assertThat(store.deleteSnapshot(b.id())).isTrue();
        assertThat(store.deleteSnapshot(b.id())).isFalse();
        assertThat(store.findSnapshot("named")).isEmpty();
    }

    @Test
    void the_token_seed_is_64_hex_characters_and_survives_a_reopen() {
        // given
        String seed = store.tokenSeed();
        // when
        store = reopen();
        // then
        assertThat(seed).matches("[0-9a-f]{64}");
        assertThat(store.tokenSeed()).isEqualTo(seed);
    }

    @Test
    void records_written_before_a_close_are_there_after_reopening() {
        // given
        SandboxRecord record = record(PAUSED, T0);
        store.insert(record);
        // when
        store = reopen();
        // then
        assertThat(store.all()).containsExactly(record);
    }

    @Test
    void the_host_mask_survives_a_reopen_and_a_network_update() {
        SandboxRecord plain = record(RUNNING, T0);
        SandboxRecord masked = plain.toBuilder()
                .maskRequestHost(Optional.of("localhost:${PORT}"))
                .build();
        store.insert(masked);
        NetworkPolicy egress = new NetworkPolicy(
                NetworkPolicy.InternetAccess.DENIED,
                List.of("10.0.0.0/8"),
                List.of(),
                NetworkPolicy.PublicTraffic.ALLOWED);
        assertThat(store.updateNetwork(masked.id(), EnumSet.of(RUNNING), egress))
                .isTrue();
        store = reopen();
        assertThat(store.get(masked.id())).contains(masked.withNetwork(egress));
        assertThat(store.get(masked.id()).orElseThrow().maskRequestHost()).contains("localhost:${PORT}");
    }

    protected static SandboxQuery query(int limit, Map<String, String> metadata) {
        return new SandboxQuery(
                EnumSet.of(RUNNING),
                metadata,
                Optional.empty(),
                Optional.empty(),
                SortOrder.DESC,
                limit,
                Optional.empty());
    }

    /** A sandbox of template "base" with a fresh random id (other stores' tests make theirs with it too). */
    public static SandboxRecord record(SandboxState state, Instant startedAt) {
        return new SandboxRecord(
                SandboxId.random(RANDOM),
                new TemplateId("base"),
                Optional.of("base"),
                state,
                startedAt,
                Duration.ofSeconds(300),
                Optional.empty(),
                TimeoutAction.PAUSE,
                PauseMode.WITH_MEMORY,
                true,
                true,
                new Resources(2, 512, 1024),
                Map.of("k", "v"),
                Map.of("E", "1"),
                NetworkPolicy.DEFAULT,
                "{}",
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                GuestDefaults.NONE,
                List.of());
    }

    private SnapshotRecord snapshot(String id, List<String> aliases, Instant createdAt) {
        return new SnapshotRecord(
                new TemplateId(id),
                aliases,
                Optional.empty(),
                new TemplateId("base"),
                Map.of("E", "1"),
                new Resources(2, 512, 1024),
                new StoredState(new byte[] {9}, dir.resolve(id)),
                createdAt,
                createdAt,
                "{}",
                GuestDefaults.NONE,
                List.of());
    }
}
