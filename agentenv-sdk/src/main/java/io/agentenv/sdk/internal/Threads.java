package io.agentenv.sdk.internal;

import java.lang.reflect.Method;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The SDK's shared executor: virtual threads where the JDK has them (21+), else daemon platform threads. Internal;
 * not part of the API.
 */
public final class Threads {
    private static final ExecutorService SHARED = create();

    private Threads() {}

    /** The shared executor (never shut down; its threads are daemons or virtual). */
    public static ExecutorService shared() {
        return SHARED;
    }

    private static ExecutorService create() {
        try {
            Method virtual = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
            return (ExecutorService) virtual.invoke(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            AtomicInteger n = new AtomicInteger();
            return Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "agentenv-sdk-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }
    }
}
