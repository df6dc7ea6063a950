// CPU the sandbox store spends per sandbox lifetime as the orchestrator drives it in the 20-way burst: each of 20
// virtual threads at once runs a create (deferred insert of the CREATING record, then its replace by the RUNNING one),
// the first command's lookup and a kill (two reads, the CAS to KILLING, one more read, the delete). Measured per burst
// of 20, after warm-up bursts: the process's CPU (every thread, the fsyncs' kernel time included) and the store writer
// thread's (aenv-store-writer), per lifetime; wall time per burst as context. Runs against a built server jar, so
// two builds compare with the same command (the base's jar and lib/ saved as for bench/container/server-ab.sh):
//   source scripts/lib/env.sh
//   java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp 'agentenv-server/target/agentenv-server.jar:agentenv-server/target/lib/*' \
//       bench/store/StoreCost.java [bursts=300] [warm-up bursts=200] [metadata pairs=0] [dir=a new one under /var/tmp,
//       deleted at the end]
// The store file lives on the disk of the server's state (ext4 here), not tmpfs: a commit's fsync is part of the cost.
import io.agentenv.orchestrator.GuestDefaults;
import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.TimeoutAction;
import io.agentenv.store.sqlite.SqliteSandboxStore;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public class StoreCost {
    static final int BURST = 20;
    static final SecureRandom RANDOM = new SecureRandom();

    public static void main(String[] args) throws Exception {
        int bursts = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int pairs = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        boolean ownDir = args.length <= 3;
        Path dir = ownDir ? Files.createTempDirectory(Path.of("/var/tmp"), "store-cost") : Path.of(args[3]);
        Map<String, String> metadata = new HashMap<>();
        for (int i = 0; i < pairs; i++) {
            metadata.put("key" + i, "value" + i);
        }
        var threads = ManagementFactory.getThreadMXBean();
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (SqliteSandboxStore store = SqliteSandboxStore.open(dir.resolve("agentenv.db"));
             var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < warmup; i++) {
                burst(store, executor, metadata);
            }
            long writer = writerThreadId();
            long[] process = new long[bursts];
            long[] writerCpu = new long[bursts];
            long[] wall = new long[bursts];
            for (int i = 0; i < bursts; i++) {
                long p0 = os.getProcessCpuTime();
                long w0 = threads.getThreadCpuTime(writer);
                long t0 = System.nanoTime();
                burst(store, executor, metadata);
                wall[i] = System.nanoTime() - t0;
                writerCpu[i] = threads.getThreadCpuTime(writer) - w0;
                process[i] = os.getProcessCpuTime() - p0;
            }
            System.out.printf("%d bursts of %d lifetimes (after %d warm-up bursts), %d metadata pairs, store in %s%n",
                    bursts, BURST, warmup, pairs, dir);
            // the process's clock moves in 10 ms ticks: its mean over all bursts only
            System.out.printf("per lifetime: process CPU mean %.1f us; store writer CPU mean %.1f us, median %.1f us;"
                            + " burst wall median %.2f ms%n",
                    mean(process) / BURST / 1e3, mean(writerCpu) / BURST / 1e3, median(writerCpu) / BURST / 1e3,
                    median(wall) / 1e6);
        } finally {
            if (ownDir) {
                try (var files = Files.list(dir)) {
                    for (Path file : files.toList()) {
                        Files.delete(file);
                    }
                }
                Files.delete(dir);
            }
        }
    }

    static void burst(SqliteSandboxStore store, java.util.concurrent.ExecutorService executor, Map<String, String> metadata)
            throws Exception {
        List<Future<?>> lifetimes = new ArrayList<>();
        for (int i = 0; i < BURST; i++) {
            lifetimes.add(executor.submit(() -> {
                lifetime(store, metadata);
                return null;
            }));
        }
        for (Future<?> f : lifetimes) {
            f.get();
        }
    }

    static void lifetime(SqliteSandboxStore store, Map<String, String> metadata) {
        SandboxRecord creating = new SandboxRecord(SandboxId.random(RANDOM), new TemplateId("base"), Optional.of("base"),
                SandboxState.CREATING, Instant.now(), Duration.ofSeconds(300), Optional.empty(), TimeoutAction.KILL,
                PauseMode.WITH_MEMORY, false, true, new Resources(2, 512, 1024), metadata, Map.of(),
                NetworkPolicy.DEFAULT, "{}", Optional.empty(), Optional.of(UUID.randomUUID()), Optional.empty(),
                GuestDefaults.NONE, List.of());
        SandboxId id = creating.id();
        store.insert(creating, SandboxStore.Durability.WITH_NEXT_WRITE);
        SandboxRecord running = creating.withState(SandboxState.RUNNING)
                .withTtl(creating.timeout(), Optional.of(Instant.now().plus(creating.timeout())));
        check(store.replace(running, EnumSet.of(SandboxState.CREATING)), "replace");
        check(store.get(id).isPresent(), "first command's lookup");
        check(store.get(id).isPresent(), "kill's read");
        check(store.transition(id, EnumSet.of(SandboxState.RUNNING), SandboxState.KILLING), "CAS to KILLING");
        check(store.get(id).isPresent(), "kill's instance read");
        check(store.delete(id, EnumSet.of(SandboxState.KILLING)), "delete");
    }

    static void check(boolean done, String what) {
        if (!done) {
            throw new IllegalStateException(what + " failed");
        }
    }

    static long writerThreadId() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("aenv-store-writer"))
                .map(Thread::threadId).findFirst().orElseThrow(() -> new IllegalStateException("no store writer thread"));
    }

    static double mean(long[] values) {
        return Arrays.stream(values).average().orElse(0);
    }

    static double median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
