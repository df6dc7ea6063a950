package io.agentenv.backend.container.lifecycle;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.backend.container.storage.SandboxDirs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;

/**
 * {@code instance.json} in a running sandbox's dir: what a restarted server needs to re-attach to a container that kept
 * running (its lineage and network slot). Written atomically once the sandbox is up.
 */
public final class InstanceFile {

    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    static final String NAME = "instance.json";

    record Wire(List<String> layers, String template, String envdDir, int slot) {}

    /** What a running sandbox left. */
    public record Contents(Lineage lineage, int slot) {}

    private InstanceFile() {}

    static void write(SandboxDirs dirs, Lineage lineage, int slot) throws IOException {
        Path tmp = dirs.dir().resolve(NAME + ".tmp");
        JSON.writeValue(
                tmp.toFile(),
                new Wire(
                        lineage.layers(),
                        lineage.template().toString(),
                        lineage.envdDir().toString(),
                        slot));
        Files.move(tmp, dirs.dir().resolve(NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The file's contents, or empty when there is none (the sandbox never finished starting). */
    public static Optional<Contents> read(SandboxDirs dirs) throws IOException {
        Path file = dirs.dir().resolve(NAME);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        Wire wire = JSON.readValue(file.toFile(), Wire.class);
        try {
            return Optional.of(new Contents(
                    new Lineage(wire.layers(), Path.of(wire.template()), Path.of(wire.envdDir())), wire.slot()));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IOException("malformed " + file + ": " + e.getMessage(), e);
        }
    }
}
