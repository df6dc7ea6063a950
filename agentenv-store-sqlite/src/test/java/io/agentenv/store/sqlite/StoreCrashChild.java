package io.agentenv.store.sqlite;

import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The process {@link StoreCrashTest} kills with SIGKILL: opens the store at {@code args[0]}, creates {@code args[1]}
 * sandboxes at once the way the launcher does (a deferred CREATING insert, then the RUNNING replace), prints each id
 * and then {@code ready} once every create returned, and waits on its stdin (never closed) to be killed.
 */
final class StoreCrashChild {
    private StoreCrashChild() {}

    static void main(String[] args) throws Exception {
        SqliteSandboxStore store = SqliteSandboxStore.open(Path.of(args[0]));
        int count = Integer.parseInt(args[1]);
        List<Future<SandboxRecord>> creates = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < count; i++) {
                creates.add(threads.submit(() -> {
                    SandboxRecord creating =
                            StoreStatementsPerCreateTest.record(SandboxState.CREATING, Map.of("n", "1"));
                    store.insert(creating, SandboxStore.Durability.WITH_NEXT_WRITE);
                    SandboxRecord running = creating.withState(SandboxState.RUNNING)
                            .withTtl(
                                    creating.timeout(),
                                    Optional.of(creating.startedAt().plus(creating.timeout())));
                    if (!store.replace(running, EnumSet.of(SandboxState.CREATING))) {
                        throw new IllegalStateException("the replace of " + creating.id() + " found another state");
                    }
                    return running;
                }));
            }
        }
        for (Future<SandboxRecord> create : creates) {
            System.out.println(create.get().id().value());
        }
        System.out.println("ready");
        System.out.flush();
        System.in.read(); // killed while waiting here
    }
}
