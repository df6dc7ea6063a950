package io.agentenv.volumes;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A {@link VolumeStore} in a map, for tests of the registry. */
final class InMemoryVolumeStore implements VolumeStore {
    private final Map<String, VolumeRecord> volumes = new LinkedHashMap<>();

    @Override
    public synchronized boolean insert(VolumeRecord volume) {
        if (volumes.values().stream().anyMatch(v -> v.name().equals(volume.name()))) {
            return false;
        }
        volumes.put(volume.id(), volume);
        return true;
    }

    @Override
    public synchronized Optional<VolumeRecord> find(String id) {
        return Optional.ofNullable(volumes.get(id));
    }

    @Override
    public synchronized List<VolumeRecord> list() {
        List<VolumeRecord> all = new ArrayList<>(volumes.values());
        all.sort(Comparator.comparing(VolumeRecord::createdAt).reversed());
        return all;
    }

    @Override
    public synchronized boolean delete(String id) {
        return volumes.remove(id) != null;
    }
}
