package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.storage.SandboxDirs;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Which container a sandbox runs in and where its dirs are: {@code <id prefix><sandbox id>}, or a claimed warm-pool
 * member's container, recorded in {@code claims/<sandbox id>} for restart recovery and the reaper.
 */
public final class ContainerNames {

    private final String idPrefix;
    private final Path sandboxesDir;
    private final Path claimsDir;

    public ContainerNames(String idPrefix, Path sandboxesDir, Path claimsDir) {
        this.idPrefix = requireNonNull(idPrefix, "idPrefix is null");
        this.sandboxesDir = requireNonNull(sandboxesDir, "sandboxesDir is null");
        this.claimsDir = requireNonNull(claimsDir, "claimsDir is null");
    }

    public String idPrefix() {
        return idPrefix;
    }

    public Path sandboxesDir() {
        return sandboxesDir;
    }

    public Path claimsDir() {
        return claimsDir;
    }

    /** The container id a sandbox gets when it is restored or booted for itself. */
    public ContainerId containerId(SandboxId id) {
        return new ContainerId(idPrefix + id.value());
    }

    /**
     * The container a sandbox runs in: a claimed warm-pool member's ({@link #claim}), else {@link #containerId}.
     * Restart recovery and the reaper go through this.
     */
    public ContainerId containerFor(SandboxId id) throws IOException {
        Path claim = claimsDir.resolve(id.value());
        if (Files.isRegularFile(claim)) {
            return new ContainerId(Files.readString(claim).strip());
        }
        return containerId(id);
    }

    public SandboxDirs dirs(ContainerId id) {
        return SandboxDirs.of(sandboxesDir, id);
    }

    /** Records that sandbox {@code id} runs in warm-pool member {@code container} (atomically). */
    void claim(SandboxId id, ContainerId container) throws IOException {
        recordClaim(claimsDir, id, container);
    }

    static void recordClaim(Path claimsDir, SandboxId id, ContainerId container) throws IOException {
        Path tmp = claimsDir.resolve("." + id.value() + ".tmp");
        try {
            Files.writeString(tmp, container.value());
        } catch (NoSuchFileException e) { // the first claim on this host: made here, not tried (a mkdir) on every claim
            Files.createDirectories(claimsDir);
            Files.writeString(tmp, container.value());
        }
        Files.move(
                tmp,
                claimsDir.resolve(id.value()),
                StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    void unclaim(SandboxId id) throws IOException {
        Files.deleteIfExists(claimsDir.resolve(id.value()));
    }
}
