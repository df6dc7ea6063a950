package io.agentenv.sdk;

import java.util.Objects;
import java.util.Optional;

/**
 * What happens when a sandbox's timeout passes, as E2B's {@code lifecycle} option: kill it (the default) or pause it
 * (with its memory unless {@code keepMemory} is false: then only the filesystem is kept and a resume boots fresh),
 * and whether traffic to a paused sandbox resumes it ({@code autoResume}, only with pause and memory).
 *
 * @param onTimeout  kill or pause
 * @param keepMemory whether a timeout pause keeps memory (empty: the server's default, true); only with pause
 * @param autoResume whether traffic resumes a paused sandbox (empty: the server's default, false); only with pause
 */
public record Lifecycle(OnTimeout onTimeout, Optional<Boolean> keepMemory, Optional<Boolean> autoResume) {
    /** Checks the combination like E2B's SDKs (all refused with {@link InvalidArgumentException}). */
    public Lifecycle {
        Objects.requireNonNull(onTimeout, "onTimeout");
        Objects.requireNonNull(keepMemory, "keepMemory");
        Objects.requireNonNull(autoResume, "autoResume");
        if (keepMemory.isPresent() && onTimeout != OnTimeout.PAUSE) {
            throw new InvalidArgumentException("keepMemory is only allowed when onTimeout is PAUSE");
        }
        if (autoResume.orElse(false) && onTimeout != OnTimeout.PAUSE) {
            throw new InvalidArgumentException("autoResume can only be true when onTimeout is PAUSE");
        }
        if (autoResume.orElse(false) && !keepMemory.orElse(true)) {
            throw new InvalidArgumentException(
                    "autoResume cannot be true with keepMemory false: a filesystem-only pause "
                            + "cannot be resumed by traffic; resume it with Sandbox.connect");
        }
    }

    /** Kill on timeout. */
    public static Lifecycle kill() {
        return new Lifecycle(OnTimeout.KILL, Optional.empty(), Optional.empty());
    }

    /** Pause (with memory) on timeout. */
    public static Lifecycle pause() {
        return new Lifecycle(OnTimeout.PAUSE, Optional.empty(), Optional.empty());
    }

    /** Pause on timeout, keeping memory or not. */
    public static Lifecycle pause(boolean keepMemory) {
        return new Lifecycle(OnTimeout.PAUSE, Optional.of(keepMemory), Optional.empty());
    }

    /** This lifecycle with traffic resuming a paused sandbox (or not). */
    public Lifecycle withAutoResume(boolean autoResume) {
        return new Lifecycle(onTimeout, keepMemory, Optional.of(autoResume));
    }
}
