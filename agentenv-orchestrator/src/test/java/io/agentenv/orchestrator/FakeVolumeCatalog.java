package io.agentenv.orchestrator;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/** Volumes for orchestrator tests: added and removed by the test, content directories under {@code /volumes}. */
final class FakeVolumeCatalog implements VolumeCatalog {
    private final Map<String, Volume> byId = new ConcurrentHashMap<>();
    /** How many {@link #keepingVolumes} calls are running now. */
    private final AtomicInteger keeping = new AtomicInteger();
    /** Lookups made while no {@link #keepingVolumes} call was running. */
    final AtomicInteger unguardedLookups = new AtomicInteger();

    Volume add(String id, String name) {
        Volume volume = new Volume(id, name);
        byId.put(id, volume);
        return volume;
    }

    void remove(String id) {
        byId.remove(id);
    }

    static Path contentOf(String id) {
        return Path.of("/volumes", id, "content");
    }

    @Override
    public Optional<Volume> find(String nameOrId) {
        if (keeping.get() == 0) {
            unguardedLookups.incrementAndGet();
        }
        Volume volume = byId.get(nameOrId);
        if (volume != null) {
            return Optional.of(volume);
        }
        return byId.values().stream().filter(v -> v.name().equals(nameOrId)).findFirst();
    }

    @Override
    public Path contentDir(String volumeId) {
        if (!byId.containsKey(volumeId)) {
            throw AgentEnvException.invalidArgument("volume " + volumeId + " not found");
        }
        return contentOf(volumeId);
    }

    @Override
    public <T> T keepingVolumes(Supplier<T> work) {
        keeping.incrementAndGet();
        try {
            return work.get();
        } finally {
            keeping.decrementAndGet();
        }
    }
}
