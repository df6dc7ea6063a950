package io.agentenv.server.volumes;

import static java.util.Objects.requireNonNull;

import io.agentenv.server.config.VolumeConfig;
import io.agentenv.volumes.VolumeIds;
import io.agentenv.volumes.VolumeSettings;
import io.agentenv.volumes.VolumeStore;
import io.agentenv.volumes.VolumeTokens;
import io.agentenv.volumes.VolumeUsers;
import io.agentenv.volumes.Volumes;
import io.agentenv.volumes.storage.DirectoryVolumeStorage;
import io.agentenv.volumes.storage.LoopVolumeStorage;
import io.agentenv.volumes.storage.VolumeStorage;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;

/**
 * Builds the volume registry as the configuration asks: the storage under {@code <data dir>/volumes} (or the cluster's
 * shared volume directory), the guest ids
 * the backend maps sandboxes' users to (its {@code guest_id_start} setting), the content tokens from the store's seed.
 */
public final class ServerVolumes {
    /** The backend setting ({@code AENV_BACKEND_GUEST_ID_START}) that moves sandboxes' ids on the host. */
    static final String GUEST_ID_START = "guest_id_start";

    private ServerVolumes() {}

    public static Volumes open(
            VolumeConfig config,
            Map<String, String> backendSettings,
            Path dataDir,
            VolumeStore store,
            String tokenSeed,
            VolumeUsers users,
            Clock clock) {
        requireNonNull(config, "config is null");
        int guestIdStart = guestIdStart(backendSettings);
        VolumeSettings settings = new VolumeSettings(config.defaultSizeMiB(), config.maxSizeMiB(), guestIdStart);
        Path dir = config.sharedDir().orElse(dataDir.resolve("volumes"));
        VolumeStorage storage = switch (config.storage()) {
            case LOOP -> new LoopVolumeStorage(dir, settings.ownerHostId(), settings.ownerHostId());
            case DIRECTORY ->
                new DirectoryVolumeStorage(
                        dir,
                        config.shared()
                                ? Optional.of(new DirectoryVolumeStorage.Owner(
                                        settings.ownerHostId(), settings.ownerHostId()))
                                : Optional.empty());
        };
        return new Volumes(
                store,
                storage,
                new VolumeTokens(tokenSeed),
                users,
                settings,
                new VolumeIds(new SecureRandom()),
                clock,
                config.storage() == VolumeConfig.Storage.LOOP || config.shared());
    }

    private static int guestIdStart(Map<String, String> backendSettings) {
        String value = backendSettings.get(GUEST_ID_START);
        if (value == null) {
            return VolumeSettings.DEFAULT_GUEST_ID_START;
        }
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            return VolumeSettings.DEFAULT_GUEST_ID_START; // the backend reports its own bad setting at start
        }
    }
}
