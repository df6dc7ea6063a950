package io.agentenv.backend.container.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SavedStatesTest {

    private static final Lineage LINEAGE = new Lineage(
            List.of("0", "/var/lib/agentenv/templates/base-1/layer"),
            Path.of("/var/cache/agentenv/templates/base/abc/rootfs"),
            Path.of("/var/lib/agentenv/envd/123"));
    private static final Resources RESOURCES = new Resources(2, 512, 10_000);
    private static final String BOOT_ID = "0d5f4a8e-3c1b-4e7a-9f2d-6b8c1a2e3f40";

    @Test
    void a_state_written_before_sandboxes_had_their_own_boot_id_decodes_without_one() throws Exception {
        String old = "{\"version\":1,\"kind\":\"paused\",\"mode\":\"WITH_MEMORY\",\"layers\":[],\"template\":\"/t\","
                + "\"envdDir\":\"/e\",\"cpuCount\":2,\"memoryMiB\":512,\"diskSizeMiB\":1024,\"guestToken\":null}";

        SavedStates.Paused decoded = SavedStates.decodePaused(old.getBytes(StandardCharsets.UTF_8), Path.of("/a"));

        assertThat(decoded.bootId()).isEmpty();
        assertThat(decoded.volumePaths()).isEmpty();
        assertThat(decoded.files()).isEmpty();
    }

    @Test
    void a_state_whose_file_key_could_name_a_path_is_malformed() {
        String state = "{\"version\":1,\"kind\":\"paused\",\"mode\":\"WITH_MEMORY\",\"layers\":[],\"template\":\"/t\","
                + "\"envdDir\":\"/e\",\"cpuCount\":2,\"memoryMiB\":512,\"diskSizeMiB\":1024,"
                + "\"files\":{\"/t\":\"../../etc\"}}";

        assertThatThrownBy(() -> SavedStates.decodePaused(state.getBytes(StandardCharsets.UTF_8), Path.of("/a")))
                .isInstanceOf(BackendException.Terminal.class)
                .hasMessageContaining("not a file key");
    }

    @Test
    void a_paused_state_round_trips_found_under_the_artifact_dir_it_is_decoded_with() throws Exception {
        SavedStates.Paused paused = new SavedStates.Paused(
                PauseMode.WITH_MEMORY,
                LINEAGE,
                RESOURCES,
                Path.of("/a/one"),
                Optional.of(BOOT_ID),
                List.of("/data"),
                Map.of("/t/rootfs", "0123abcd"));

        SavedStates.Paused decoded = SavedStates.decodePaused(paused.encode(), Path.of("/b/two"));

        assertThat(decoded.mode()).isEqualTo(PauseMode.WITH_MEMORY);
        assertThat(decoded.lineage()).isEqualTo(LINEAGE);
        assertThat(decoded.resources()).isEqualTo(RESOURCES);
        assertThat(decoded.images()).isEqualTo(Path.of("/b/two/images"));
        assertThat(decoded.bootId()).contains(BOOT_ID);
        assertThat(decoded.volumePaths()).containsExactly("/data");
        assertThat(decoded.files()).containsExactly(Map.entry("/t/rootfs", "0123abcd"));
        assertThat(new String(paused.encode(), StandardCharsets.UTF_8)).doesNotContain("/a/one");
    }

    @Test
    void a_snapshot_keeps_the_source_token_and_a_paused_state_is_not_a_snapshot() throws Exception {
        SavedStates.Snapshot snapshot = new SavedStates.Snapshot(
                LINEAGE,
                RESOURCES,
                Optional.of(new AccessToken("t0k")),
                Path.of("/a"),
                Optional.of(BOOT_ID),
                List.of(),
                Map.of());

        SavedStates.Snapshot decoded = SavedStates.decodeSnapshot(snapshot.encode(), Path.of("/a"));

        assertThat(decoded.guestToken()).contains(new AccessToken("t0k"));
        assertThat(decoded.bootId()).contains(BOOT_ID);
        assertThat(decoded.lineage().owned()).containsExactly("0");
        assertThat(decoded.volumePaths()).isEmpty();
        assertThatThrownBy(() -> SavedStates.decodePaused(snapshot.encode(), Path.of("/a")))
                .isInstanceOf(BackendException.Terminal.class)
                .hasMessageContaining("not a container paused state");
        assertThatThrownBy(() -> SavedStates.decodeSnapshot("{".getBytes(StandardCharsets.UTF_8), Path.of("/a")))
                .isInstanceOf(BackendException.Terminal.class);
    }

    @Test
    void a_capture_puts_the_upper_on_top_and_renumbers_the_owned_layers_below_it() {
        Lineage child = new Lineage(List.of("0", "1", "/shared/layer"), Path.of("/t/rootfs"), Path.of("/e"));

        Lineage captured = child.withCapturedUpper();

        assertThat(captured.layers()).containsExactly("0", "1", "2", "/shared/layer");
        assertThat(child.renumbered())
                .extracting(pair -> pair[0] + ">" + pair[1])
                .containsExactly("0>1", "1>2");
        assertThat(captured.lowers(Path.of("/d/layers")))
                .containsExactly(
                        Path.of("/d/layers/0"),
                        Path.of("/d/layers/1"),
                        Path.of("/d/layers/2"),
                        Path.of("/shared/layer"),
                        Path.of("/t/rootfs"));
    }

    @Test
    void a_lineage_refuses_layers_that_overlayfs_would_misread_or_that_escape() {
        assertThatThrownBy(() -> new Lineage(List.of("../x"), Path.of("/t"), Path.of("/e")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Lineage(List.of("/a:b"), Path.of("/t"), Path.of("/e")))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
