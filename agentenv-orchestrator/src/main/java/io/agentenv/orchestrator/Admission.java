package io.agentenv.orchestrator;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** Counts in-flight mutating operations and refuses new ones once shutdown has begun. */
final class Admission {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition idle = lock.newCondition();
    private int inFlight;
    private boolean closing;

    /** UNAVAILABLE after {@link #close()}; every successful enter must be paired with {@link #exit()}. */
    void enter() {
        lock.lock();
        try {
            if (closing) {
                throw AgentEnvException.unavailable();
            }
            inFlight++;
        } finally {
            lock.unlock();
        }
    }

    void exit() {
        lock.lock();
        try {
            if (--inFlight == 0) {
                idle.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Refuses new operations from now on; returns false if it was already closing. */
    boolean close() {
        lock.lock();
        try {
            boolean first = !closing;
            closing = true;
            return first;
        } finally {
            lock.unlock();
        }
    }

    boolean isClosing() {
        lock.lock();
        try {
            return closing;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until no operation is in flight; false if {@code timeout} passed first. */
    boolean awaitIdle(Duration timeout) throws InterruptedException {
        long left = TimeUnit.NANOSECONDS.convert(timeout);
        lock.lock();
        try {
            while (inFlight > 0) {
                if (left <= 0) {
                    return false;
                }
                left = idle.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }
}
