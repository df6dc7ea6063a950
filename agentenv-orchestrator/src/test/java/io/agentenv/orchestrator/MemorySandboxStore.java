package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The {@link SandboxStore} contract in memory, for the orchestrator's tests: every method is atomic under one monitor,
 * every write is durable at once (so {@link Durability#WITH_NEXT_WRITE} too), lists are keyset-paginated in the same
 * orders as the SQLite store. {@link #reopen()} is a restart on the same data: the closed store refuses every call with
 * {@link StoreException}, as a closed database file does, so an abandoned orchestrator cannot write behind the new one.
 */
final class MemorySandboxStore implements SandboxStore {
    /** What a restart keeps: the "file". */
    private static final class Data {
        final Map<SandboxId, SandboxRecord> sandboxes = new HashMap<>();
        final Map<TemplateId, SnapshotRecord> snapshots = new HashMap<>();
        final Map<String, TemplateId> aliases = new HashMap<>();
        String tokenSeed;
    }

    private final Data data;
    private boolean closed;

    MemorySandboxStore() {
        this(new Data());
    }

    private MemorySandboxStore(Data data) {
        this.data = data;
    }

    /** A new store on this one's data, as a restart opens the same file (close this one first). */
    MemorySandboxStore reopen() {
        return new MemorySandboxStore(data);
    }

    private <T> T locked(Function<Data, T> body) {
        synchronized (data) {
            if (closed) {
                throw new StoreException("the store is closed", new IllegalStateException("closed"));
            }
            return body.apply(data);
        }
    }

    private boolean update(SandboxId id, Set<SandboxState> expected, UnaryOperator<SandboxRecord> change) {
        requireNonNull(id, "id is null");
        return locked(d -> {
            SandboxRecord stored = d.sandboxes.get(id);
            if (stored == null || !expected.contains(stored.state())) {
                return false;
            }
            d.sandboxes.put(id, change.apply(stored));
            return true;
        });
    }

    @Override
    public void insert(SandboxRecord record, Durability durability) {
        requireNonNull(record, "record is null");
        requireNonNull(durability, "durability is null");
        locked(d -> {
            if (d.sandboxes.putIfAbsent(record.id(), record) != null) {
                throw new StoreException(
                        "cannot insert " + record.id().value(), new IllegalStateException("id exists"));
            }
            return null;
        });
    }

    @Override
    public Optional<SandboxRecord> get(SandboxId id) {
        requireNonNull(id, "id is null");
        return locked(d -> Optional.ofNullable(d.sandboxes.get(id)));
    }

    @Override
    public boolean transition(SandboxId id, Set<SandboxState> from, SandboxState to) {
        requireNonNull(to, "to is null");
        return update(id, from, r -> r.withState(to));
    }

    @Override
    public boolean replace(SandboxRecord record, Set<SandboxState> expected) {
        requireNonNull(record, "record is null");
        return update(record.id(), expected, r -> record);
    }

    @Override
    public boolean updateTtl(SandboxId id, Set<SandboxState> expected, Duration timeout, Optional<Instant> expiresAt) {
        requireNonNull(timeout, "timeout is null");
        requireNonNull(expiresAt, "expiresAt is null");
        return update(id, expected, r -> r.withTtl(timeout, expiresAt));
    }

    @Override
    public boolean updateNetwork(SandboxId id, Set<SandboxState> expected, NetworkPolicy network) {
        requireNonNull(network, "network is null");
        return update(id, expected, r -> r.withNetwork(network));
    }

    @Override
    public boolean updateCustomExtensionParams(SandboxId id, Set<SandboxState> expected, String customExtensionParams) {
        requireNonNull(customExtensionParams, "customExtensionParams is null");
        return update(id, expected, r -> r.withCustomExtensionParams(customExtensionParams));
    }

    @Override
    public boolean delete(SandboxId id, Set<SandboxState> expected) {
        requireNonNull(id, "id is null");
        return locked(d -> {
            SandboxRecord stored = d.sandboxes.get(id);
            if (stored == null || !expected.contains(stored.state())) {
                return false;
            }
            d.sandboxes.remove(id);
            return true;
        });
    }

    @Override
    public List<SandboxId> listExpired(Instant now) {
        requireNonNull(now, "now is null");
        return locked(d -> d.sandboxes.values().stream()
                .filter(r -> r.state() == SandboxState.RUNNING)
                .filter(r -> r.expiresAt().isPresent() && !r.expiresAt().get().isAfter(now))
                .sorted(Comparator.comparing((SandboxRecord r) -> r.expiresAt().orElseThrow())
                        .thenComparing(r -> r.id().value()))
                .map(SandboxRecord::id)
                .toList());
    }

    @Override
    public Set<SandboxId> idsIn(SandboxState state) {
        requireNonNull(state, "state is null");
        return locked(d -> Set.copyOf(d.sandboxes.values().stream()
                .filter(r -> r.state() == state)
                .map(SandboxRecord::id)
                .toList()));
    }

    @Override
    public Set<SandboxId> mounting(String volumeId) {
        requireNonNull(volumeId, "volumeId is null");
        return locked(d -> Set.copyOf(d.sandboxes.values().stream()
                .filter(r -> r.volumes().stream().anyMatch(v -> v.volumeId().equals(volumeId)))
                .map(SandboxRecord::id)
                .toList()));
    }

    @Override
    public Page<SandboxRecord> list(SandboxQuery query) {
        requireNonNull(query, "query is null");
        if (query.limit() == 0 || query.states().isEmpty()) {
            return new Page<>(List.of(), Optional.empty());
        }
        boolean desc = query.order() == SortOrder.DESC;
        Comparator<SandboxRecord> order =
                Comparator.comparing(SandboxRecord::startedAt).thenComparing(r -> r.id().value());
        List<SandboxRecord> rows = locked(d -> d.sandboxes.values().stream()
                .filter(r -> query.states().contains(r.state()))
                .filter(r -> query.template()
                        .map(t -> r.template().value().equals(t) || r.alias().equals(Optional.of(t)))
                        .orElse(true))
                .filter(r -> query.startedAfter()
                        .map(after -> !r.startedAt().isBefore(after))
                        .orElse(true))
                .filter(r -> query.metadata().entrySet().stream()
                        .allMatch(e -> e.getValue().equals(r.metadata().get(e.getKey()))))
                .filter(r -> query.after()
                        .map(c -> after(r.startedAt(), r.id().value(), c, desc))
                        .orElse(true))
                .sorted(desc ? order.reversed() : order)
                .limit(query.limit() + 1L)
                .toList());
        return page(rows, query.limit(), r -> new Cursor(r.startedAt(), r.id().value()));
    }

    private static boolean after(Instant at, String id, Cursor cursor, boolean desc) {
        int byTime = at.compareTo(cursor.at());
        int cmp = byTime != 0 ? byTime : id.compareTo(cursor.id());
        return desc ? cmp < 0 : cmp > 0;
    }

    private static <T> Page<T> page(List<T> rows, int limit, Function<T, Cursor> cursor) {
        if (rows.size() <= limit) {
            return new Page<>(rows, Optional.empty());
        }
        List<T> items = rows.subList(0, limit);
        return new Page<>(items, Optional.of(cursor.apply(items.getLast())));
    }

    @Override
    public List<SandboxRecord> all() {
        return locked(d -> d.sandboxes.values().stream()
                .sorted(Comparator.comparing(SandboxRecord::startedAt).thenComparing(r -> r.id().value()))
                .toList());
    }

    @Override
    public void insertSnapshot(SnapshotRecord snapshot) {
        requireNonNull(snapshot, "snapshot is null");
        locked(d -> {
            if (d.snapshots.putIfAbsent(snapshot.id(), snapshot) != null) {
                throw new StoreException(
                        "cannot insert snapshot " + snapshot.id().value(), new IllegalStateException("id exists"));
            }
            for (String alias : snapshot.aliases()) {
                d.aliases.put(alias, snapshot.id());
            }
            return null;
        });
    }

    /** The stored snapshot with the aliases it holds now (an alias moves to the newest snapshot that names it). */
    private static SnapshotRecord withAliases(Data d, SnapshotRecord s) {
        List<String> held = new ArrayList<>();
        for (String alias : s.aliases()) {
            if (s.id().equals(d.aliases.get(alias))) {
                held.add(alias);
            }
        }
        return new SnapshotRecord(
                s.id(),
                held,
                s.sourceSandbox(),
                s.sourceTemplate(),
                s.envVars(),
                s.resources(),
                s.state(),
                s.createdAt(),
                s.updatedAt(),
                s.customExtensionParams(),
                s.guestDefaults(),
                s.volumes());
    }

    @Override
    public Optional<SnapshotRecord> findSnapshot(String idOrAlias) {
        requireNonNull(idOrAlias, "idOrAlias is null");
        return locked(d -> {
            SnapshotRecord byId = TemplateId.isValid(idOrAlias) ? d.snapshots.get(new TemplateId(idOrAlias)) : null;
            SnapshotRecord found = byId != null
                    ? byId
                    : Optional.ofNullable(d.aliases.get(idOrAlias))
                            .map(d.snapshots::get)
                            .orElse(null);
            return Optional.ofNullable(found).map(s -> withAliases(d, s));
        });
    }

    @Override
    public Page<SnapshotRecord> listSnapshots(SnapshotQuery query) {
        requireNonNull(query, "query is null");
        if (query.limit() == 0) {
            return new Page<>(List.of(), Optional.empty());
        }
        Comparator<SnapshotRecord> newestFirst = Comparator.comparing(SnapshotRecord::createdAt)
                .thenComparing((SnapshotRecord s) -> s.id().value())
                .reversed();
        List<SnapshotRecord> rows = locked(d -> d.snapshots.values().stream()
                .map(s -> withAliases(d, s))
                .filter(s -> query.sandbox()
                        .map(id -> s.sourceSandbox().equals(Optional.of(id)))
                        .orElse(true))
                .filter(s -> query.name()
                        .map(n -> s.id().value().equals(n) || s.aliases().contains(n))
                        .orElse(true))
                .filter(s -> query.after()
                        .map(c -> after(s.createdAt(), s.id().value(), c, true))
                        .orElse(true))
                .sorted(newestFirst)
                .limit(query.limit() + 1L)
                .toList());
        return page(rows, query.limit(), s -> new Cursor(s.createdAt(), s.id().value()));
    }

    @Override
    public boolean deleteSnapshot(TemplateId id) {
        requireNonNull(id, "id is null");
        return locked(d -> {
            if (d.snapshots.remove(id) == null) {
                return false;
            }
            d.aliases.values().removeIf(id::equals);
            return true;
        });
    }

    @Override
    public String tokenSeed() {
        return locked(d -> {
            if (d.tokenSeed == null) {
                byte[] seed = new byte[32];
                new SecureRandom().nextBytes(seed);
                d.tokenSeed = HexFormat.of().formatHex(seed);
            }
            return d.tokenSeed;
        });
    }

    @Override
    public void close() {
        synchronized (data) {
            closed = true;
        }
    }
}
