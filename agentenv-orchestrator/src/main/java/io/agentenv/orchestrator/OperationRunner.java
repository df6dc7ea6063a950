package io.agentenv.orchestrator;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs lifecycle operations on virtual threads that belong to the orchestrator, not to the caller: a caller that goes
 * away (an HTTP client that disconnects, an interrupted thread) never cancels a half-done operation. Also the single
 * place where unexpected failures become {@link AgentEnvException}s.
 */
final class OperationRunner {
    private static final Logger log = LoggerFactory.getLogger(OperationRunner.class);

    private final Admission admission = new Admission();
    private final ExecutorService executor = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("aenv-op-", 0).factory());

    ExecutorService executor() {
        return executor;
    }

    /** Runs a mutating operation; UNAVAILABLE once shutdown has begun. */
    <T> T mutate(Callable<T> work) {
        admission.enter();
        Future<T> future;
        try {
            future = executor.submit(() -> {
                try {
                    return work.call();
                } finally {
                    admission.exit();
                }
            });
        } catch (RejectedExecutionException e) {
            admission.exit();
            throw AgentEnvException.unavailable();
        }
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AgentEnvException(
                    ErrorKind.UNAVAILABLE, "interrupted while waiting; the operation completes in the background", e);
        } catch (ExecutionException e) {
            throw translate(e.getCause());
        }
    }

    /** Runs {@code work} on the caller's thread only if no shutdown has begun; false when skipped. */
    boolean ifAdmitted(Runnable work) {
        try {
            admission.enter();
        } catch (AgentEnvException e) {
            return false;
        }
        try {
            work.run();
            return true;
        } finally {
            admission.exit();
        }
    }

    static <T> T read(Supplier<T> work) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }

    /** Refuses new operations from now on; false if that had already begun. */
    boolean beginShutdown() {
        return admission.close();
    }

    /** Waits (bounded) for the operations in flight to finish. */
    void awaitIdle(Duration wait) throws InterruptedException {
        if (!admission.awaitIdle(wait)) {
            log.atWarn().log("operations still in flight at shutdown");
        }
    }

    void stopExecutor(Duration wait) {
        executor.shutdown();
        try {
            executor.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static RuntimeException translate(Throwable failure) {
        return switch (failure) {
            case AgentEnvException e -> e;
            case StoreException e -> new AgentEnvException(ErrorKind.INTERNAL, "the state store failed", e);
            case Error e -> throw e;
            default -> {
                log.atError().setCause(failure).log("unexpected failure in a lifecycle operation");
                yield new AgentEnvException(ErrorKind.INTERNAL, "internal error", failure);
            }
        };
    }
}
