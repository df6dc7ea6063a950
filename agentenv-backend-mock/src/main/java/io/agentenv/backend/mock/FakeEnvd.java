package io.agentenv.backend.mock;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.GuestProcess;
import io.agentenv.spi.Resources;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * An in-memory envd for one runtime generation of a mock sandbox. Metrics are derived from the instance's resources
 * and the clock unless a test sets them; logs are a journal a test appends to; processes a list a test sets. Per call a
 * test can hold the next one at a {@link Gate} or make it fail, and read call counters. Once {@link #disconnect()}ed
 * (the instance paused or closed) every call fails with {@link EnvdException.Unreachable}, as the real client does.
 */
public final class FakeEnvd implements EnvdApi {
    public enum Call {
        HEALTH,
        INIT,
        METRICS,
        LOGS,
        PROCESSES,
        RUN,
        UPLOAD
    }

    /** A file written through {@link #upload}: where, as whom, and its bytes. */
    public static final class Upload {
        private final String path;
        private final Optional<String> user;
        private final byte[] content;

        Upload(String path, Optional<String> user, byte[] content) {
            this.path = path;
            this.user = user;
            this.content = content.clone();
        }

        public String path() {
            return path;
        }

        public Optional<String> user() {
            return user;
        }

        public byte[] content() {
            return content.clone();
        }
    }

    /** What a test makes a command do: write output, then end. */
    @FunctionalInterface
    public interface Commands {
        GuestCommand.Exit run(GuestCommand command, GuestCommand.Output output);
    }

    /** By default every command succeeds without output. */
    private static final Commands SUCCEED = (command, output) -> new GuestCommand.Exit(0, true, "exit status 0");

    private static final long MIB = 1024L * 1024L;
    private static final int MAX_LIMIT = 1000;

    private sealed interface Next permits Hold, Fail {}

    private record Hold(Gate gate) implements Next {}

    private record Fail(EnvdException error) implements Next {}

    private final Clock clock;
    private final Map<Call, Deque<Next>> scripts = new EnumMap<>(Call.class);
    private final Map<Call, AtomicInteger> calls = new EnumMap<>(Call.class);
    private final List<EnvdInit> inits = new CopyOnWriteArrayList<>();
    private final List<EnvdLogEntry> journal = new ArrayList<>();
    private final AtomicBoolean connected = new AtomicBoolean(true);
    private final AtomicReference<Function<Clock, EnvdMetrics>> metrics;
    private volatile List<GuestProcess> processes = List.of();
    private volatile Commands commands = SUCCEED;
    private final List<GuestCommand> ran = new CopyOnWriteArrayList<>();
    private final List<Upload> uploads = new CopyOnWriteArrayList<>();
    private volatile Optional<AccessToken> token = Optional.empty();
    private long nextSeq = 1;

    public FakeEnvd(Resources resources, Clock clock) {
        requireNonNull(resources, "resources is null");
        this.clock = requireNonNull(clock, "clock is null");
        for (Call call : Call.values()) {
            scripts.put(call, new ConcurrentLinkedDeque<>());
            calls.put(call, new AtomicInteger());
        }
        long memTotal = resources.memoryMiB() * MIB;
        long diskTotal = resources.diskSizeMiB() * MIB;
        this.metrics = new AtomicReference<>(c -> new EnvdMetrics(
                c.instant(),
                resources.cpuCount(),
                1.5,
                memTotal / 4,
                memTotal,
                memTotal / 16,
                diskTotal / 8,
                diskTotal));
    }

    // ---- EnvdApi -----------------------------------------------------------------------------------------------

    @Override
    public void health() throws EnvdException {
        enter(Call.HEALTH);
    }

    @Override
    public void init(EnvdInit init) throws EnvdException {
        requireNonNull(init, "init is null");
        enter(Call.INIT);
        inits.add(init);
        init.accessToken().ifPresent(t -> token = Optional.of(t));
    }

    @Override
    public EnvdMetrics metrics() throws EnvdException {
        enter(Call.METRICS);
        return metrics.get().apply(clock);
    }

    @Override
    public EnvdLogPage logs(long cursor, int limit) throws EnvdException {
        if (cursor < 0 || limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("cursor must be >= 0 and limit 1.." + MAX_LIMIT);
        }
        enter(Call.LOGS);
        synchronized (journal) {
            long first = journal.isEmpty() ? nextSeq : journal.getFirst().seq();
            List<EnvdLogEntry> page =
                    journal.stream().filter(e -> e.seq() >= cursor).limit(limit).toList();
            long next =
                    page.isEmpty() ? Math.max(cursor, first) : page.getLast().seq() + 1;
            return new EnvdLogPage(page, next, first);
        }
    }

    @Override
    public List<GuestProcess> processes() throws EnvdException {
        enter(Call.PROCESSES);
        return processes;
    }

    /** Records the command and answers as the test's {@link #commands(Commands)} says (by default: exit 0). */
    @Override
    public GuestCommand.Exit run(GuestCommand command, GuestCommand.Output output) throws EnvdException {
        enter(Call.RUN);
        ran.add(command);
        return commands.run(command, output);
    }

    /** Records the file (its bytes read whole; fewer or more than {@code length} is Rejected, as envd would). */
    @Override
    public String upload(String path, Optional<String> user, long length, Supplier<InputStream> content)
            throws EnvdException {
        requireNonNull(path, "path is null");
        requireNonNull(user, "user is null");
        enter(Call.UPLOAD);
        byte[] bytes;
        try (InputStream in = content.get()) {
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new EnvdException.Unreachable("the upload's content could not be read", e);
        } catch (UncheckedIOException e) {
            throw new EnvdException.Unreachable("the upload's content could not be opened", e);
        }
        if (length >= 0 && bytes.length != length) {
            throw new EnvdException.Rejected(400, "expected " + length + " bytes, got " + bytes.length);
        }
        uploads.add(new Upload(path, user, bytes));
        return path;
    }

    // ---- scripting ---------------------------------------------------------------------------------------------

    /** The next {@code call} blocks at the returned gate until the test releases it, then proceeds. */
    public Gate holdNext(Call call) {
        Gate gate = new Gate();
        scripts.get(call).addLast(new Hold(gate));
        return gate;
    }

    /** The next {@code call} fails with {@code error}. */
    public void failNext(Call call, EnvdException error) {
        scripts.get(call).addLast(new Fail(requireNonNull(error, "error is null")));
    }

    /** Every later metrics call answers {@code reading}, given this fake's clock. */
    public void metrics(Function<Clock, EnvdMetrics> reading) {
        metrics.set(requireNonNull(reading, "reading is null"));
    }

    /** Every later command runs as {@code behaviour} says. */
    public void commands(Commands behaviour) {
        commands = requireNonNull(behaviour, "behaviour is null");
    }

    public void processes(List<GuestProcess> running) {
        processes = List.copyOf(running);
    }

    /** Appends a journal entry with the next sequence number and the clock's time; returns it. */
    public EnvdLogEntry log(EnvdLogEntry.Source source, String level, OptionalInt pid, String stream, String message) {
        synchronized (journal) {
            EnvdLogEntry entry = new EnvdLogEntry(nextSeq++, clock.instant(), source, level, pid, stream, message);
            journal.add(entry);
            return entry;
        }
    }

    /** Drops the oldest {@code count} entries, as envd's bounded journal does when it is full. */
    public void dropOldest(int count) {
        synchronized (journal) {
            journal.subList(0, Math.min(count, journal.size())).clear();
        }
    }

    /** The guest agent went away (its instance paused or closed): every later call is Unreachable. */
    public void disconnect() {
        connected.set(false);
    }

    // ---- observation -------------------------------------------------------------------------------------------

    public boolean connected() {
        return connected.get();
    }

    public int count(Call call) {
        return calls.get(call).get();
    }

    /** The commands run so far, in order. */
    public List<GuestCommand> ran() {
        return List.copyOf(ran);
    }

    /** The files written so far, in order. */
    public List<Upload> uploads() {
        return List.copyOf(uploads);
    }

    public List<EnvdInit> inits() {
        return List.copyOf(inits);
    }

    /** The token the last init set, as envd would now require it. */
    public Optional<AccessToken> token() {
        return token;
    }

    /**
     * Connection first, then the script: a call that got through before {@link #disconnect()} still answers after a
     * gate, as an answer already in flight would (what the server's generation checks must handle).
     */
    private void enter(Call call) throws EnvdException {
        calls.get(call).incrementAndGet();
        if (!connected.get()) {
            throw new EnvdException.Unreachable("fake envd is disconnected");
        }
        Next next = scripts.get(call).pollFirst();
        if (next instanceof Hold(Gate gate)) {
            gate.block();
        } else if (next instanceof Fail(EnvdException error)) {
            throw error;
        }
    }
}
