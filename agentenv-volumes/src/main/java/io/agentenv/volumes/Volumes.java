package io.agentenv.volumes;

import static java.util.Objects.requireNonNull;

import io.agentenv.volumes.content.GuestOwner;
import io.agentenv.volumes.content.VolumeFiles;
import io.agentenv.volumes.storage.VolumeStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The volume registry: creates volumes (a record in the {@link VolumeStore}, bytes in the {@link VolumeStorage}),
 * lists, finds and deletes them, derives their content tokens and opens their files for the content API. A host that
 * cannot keep volumes (the storage's {@code unavailableReason}) answers every operation with {@code UNAVAILABLE}.
 */
public final class Volumes {
    private static final Logger log = LoggerFactory.getLogger(Volumes.class);

    private final VolumeStore store;
    private final VolumeStorage storage;
    private final VolumeTokens tokens;
    private final VolumeUsers users;
    private final VolumeSettings settings;
    private final VolumeIds ids;
    private final Clock clock;
    private final GuestOwner owner;
    private final Optional<String> unavailable;
    /** Serialises creates and deletes: a name is checked and taken, or a volume removed, one at a time. */
    private final Object changes = new Object();

    /**
     * Held shared by sandbox creates from resolving their volumes until their records are stored, and exclusively by
     * a delete from asking {@link VolumeUsers} until the volume is gone: a delete never misses a sandbox being created.
     */
    private final ReadWriteLock deletions = new ReentrantReadWriteLock();

    public Volumes(
            VolumeStore store,
            VolumeStorage storage,
            VolumeTokens tokens,
            VolumeUsers users,
            VolumeSettings settings,
            VolumeIds ids,
            Clock clock,
            boolean chown) {
        this.store = requireNonNull(store, "store is null");
        this.storage = requireNonNull(storage, "storage is null");
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.users = requireNonNull(users, "users is null");
        this.settings = requireNonNull(settings, "settings is null");
        this.ids = requireNonNull(ids, "ids is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.owner = new GuestOwner(settings.guestIdStart(), VolumeSettings.GUEST_DEFAULT_USER, chown);
        this.unavailable = storage.unavailableReason();
    }

    /** At server start: mounts every known volume again. A failure is logged; the server starts anyway. */
    public void start() {
        if (unavailable.isPresent()) {
            log.atWarn().addKeyValue("reason", unavailable.get()).log("volumes are unavailable on this host");
            return;
        }
        Map<String, Integer> known = new LinkedHashMap<>();
        for (VolumeRecord volume : store.list()) {
            known.put(volume.id(), volume.sizeMiB());
        }
        try {
            storage.mountAll(known);
        } catch (IOException | RuntimeException e) {
            log.atWarn().setCause(e).log("mounting volumes at start failed");
        }
    }

    public VolumeSettings settings() {
        return settings;
    }

    /** A new volume named {@code name} of {@code sizeMiB} (the default when empty). */
    public VolumeRecord create(String name, Optional<Integer> sizeMiB) {
        VolumeNames.check(name);
        int size = sizeMiB.orElse(settings.defaultSizeMiB());
        if (size < 1 || size > settings.maxSizeMiB()) {
            throw VolumeException.invalid("volume size must be from 1 to " + settings.maxSizeMiB() + " MiB");
        }
        requireAvailable();
        synchronized (changes) {
            if (store.list().stream().anyMatch(v -> v.name().equals(name))) {
                throw VolumeException.conflict("a volume named " + name + " exists");
            }
            VolumeRecord volume =
                    new VolumeRecord(ids.next(), name, size, clock.instant().truncatedTo(ChronoUnit.MILLIS));
            try {
                storage.create(volume.id(), size);
            } catch (IOException | RuntimeException e) {
                throw new VolumeException(VolumeException.Kind.INTERNAL, "making the volume's storage failed", e);
            }
            boolean inserted;
            try {
                inserted = store.insert(volume);
            } catch (RuntimeException e) {
                discard(volume.id());
                throw e;
            }
            if (!inserted) {
                discard(volume.id());
                throw VolumeException.conflict("a volume named " + name + " exists");
            }
            log.atInfo()
                    .addKeyValue("volume_id", volume.id())
                    .addKeyValue("size_mib", size)
                    .log("volume created");
            return volume;
        }
    }

    public List<VolumeRecord> list() {
        return store.list();
    }

    /** The volume {@code id}, or {@code NOT_FOUND}. */
    public VolumeRecord get(String id) {
        if (!VolumeIds.isValid(id)) {
            throw VolumeException.notFound("volume " + clip(id) + " not found");
        }
        return store.find(id).orElseThrow(() -> VolumeException.notFound("volume " + id + " not found"));
    }

    /** The volume whose id or name is {@code nameOrId}; an id wins over a name. */
    public Optional<VolumeRecord> find(String nameOrId) {
        requireAvailable();
        if (VolumeIds.isValid(nameOrId)) {
            Optional<VolumeRecord> byId = store.find(nameOrId);
            if (byId.isPresent()) {
                return byId;
            }
        }
        return store.list().stream().filter(v -> v.name().equals(nameOrId)).findFirst();
    }

    /** The host directory of volume {@code id}'s content, to bind into sandboxes. */
    public Path contentDir(String id) {
        VolumeRecord volume = get(id);
        requireAvailable();
        try {
            return storage.content(volume.id());
        } catch (IOException e) {
            throw new VolumeException(VolumeException.Kind.UNAVAILABLE, e.getMessage(), e);
        }
    }

    /** Runs {@code work} while no volume can be deleted (deletes wait; others running it do not). */
    public <T> T keepingVolumes(Supplier<T> work) {
        Lock shared = deletions.readLock();
        shared.lock();
        try {
            return work.get();
        } finally {
            shared.unlock();
        }
    }

    public String token(String id) {
        return tokens.token(id);
    }

    /** Deletes the volume and its content; refused while a sandbox mounts it. */
    public void delete(String id) {
        VolumeRecord volume = get(id);
        requireAvailable();
        Lock exclusive = deletions.writeLock();
        exclusive.lock();
        try {
            deleteUnused(volume);
        } finally {
            exclusive.unlock();
        }
    }

    private void deleteUnused(VolumeRecord volume) {
        String id = volume.id();
        synchronized (changes) {
            Set<String> mounting = users.sandboxesMounting(volume.id());
            if (!mounting.isEmpty()) {
                throw VolumeException.conflict(
                        "volume " + id + " is mounted by sandboxes " + String.join(", ", mounting));
            }
            try {
                storage.delete(volume.id());
            } catch (IOException e) {
                if (e.getMessage() != null && e.getMessage().contains("busy")) { // umount: target is busy
                    throw new VolumeException(
                            VolumeException.Kind.CONFLICT, "volume " + id + " is in use on the host; try again", e);
                }
                throw new VolumeException(VolumeException.Kind.INTERNAL, "removing the volume's storage failed", e);
            } catch (RuntimeException e) {
                throw new VolumeException(VolumeException.Kind.INTERNAL, "removing the volume's storage failed", e);
            }
            store.delete(volume.id());
            log.atInfo().addKeyValue("volume_id", volume.id()).log("volume deleted");
        }
    }

    /**
     * The files of volume {@code id} for a content request that presented {@code token}: the token is checked first
     * ({@code UNAUTHENTICATED}), then the volume ({@code NOT_FOUND}).
     */
    public VolumeFiles files(String id, Optional<String> token) {
        if (token.isEmpty()) {
            throw new VolumeException(
                    VolumeException.Kind.UNAUTHENTICATED, "missing volume token (Authorization: Bearer)");
        }
        if (!VolumeIds.isValid(id) || !tokens.matches(id, token.get())) {
            throw new VolumeException(VolumeException.Kind.UNAUTHENTICATED, "invalid volume token");
        }
        VolumeRecord volume = get(id);
        requireAvailable();
        try {
            return new VolumeFiles(storage.content(volume.id()), owner);
        } catch (IOException e) {
            throw new VolumeException(VolumeException.Kind.UNAVAILABLE, e.getMessage(), e);
        }
    }

    public VolumeStorage.Usage usage(String id) {
        VolumeRecord volume = get(id);
        requireAvailable();
        try {
            return storage.usage(volume.id());
        } catch (IOException e) {
            throw new VolumeException(VolumeException.Kind.INTERNAL, "reading the volume's usage failed", e);
        }
    }

    private void requireAvailable() {
        if (unavailable.isPresent()) {
            throw new VolumeException(
                    VolumeException.Kind.UNAVAILABLE, "volumes are unavailable: " + unavailable.get());
        }
    }

    private void discard(String id) {
        try {
            storage.delete(id);
        } catch (IOException | RuntimeException e) {
            log.atWarn().addKeyValue("volume_id", id).setCause(e).log("removing an unregistered volume failed");
        }
    }

    private static String clip(String s) {
        if (s == null) {
            return "";
        }
        return s.length() <= 64 ? s : s.substring(0, 64) + "...";
    }
}
