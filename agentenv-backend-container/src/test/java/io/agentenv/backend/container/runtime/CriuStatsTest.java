package io.agentenv.backend.container.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CriuStatsTest {

    /** A stats-dump CRIU 4.2 wrote for a dump of envd on this host. */
    private static final byte[] IMAGE = HexFormat.of()
            .parseHex("4059105506330957260000000a2408be0d10e2ad0318cb8e0120a56d" + "2893433000"
                    + "38a44140004800500e580e600068007000");

    @TempDir
    Path dir;

    @Test
    void the_dump_entry_gives_cRIUs_phase_times_and_pages() throws IOException {
        Files.write(dir.resolve(CriuStats.FILE), IMAGE);
        assertThat(CriuStats.read(dir)).contains(new CriuStats(1726, 55010, 18251, 13989, 8595, 8356));
    }

    @Test
    void no_image_is_no_stats_and_a_cut_or_foreign_one_is_an_error() throws IOException {
        assertThat(CriuStats.read(dir)).isEmpty();
        assertThatThrownBy(() -> CriuStats.parse(Arrays.copyOf(IMAGE, 20))).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> CriuStats.parse(new byte[] {1, 2, 3})).isInstanceOf(IOException.class);
    }
}
