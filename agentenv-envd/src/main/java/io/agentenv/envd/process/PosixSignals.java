package io.agentenv.envd.process;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/** {@code kill(2)} through the FFM API, so a whole process group can be signalled (the JDK only signals one pid). */
final class PosixSignals {
    static final int SIGKILL = 9;
    static final int SIGTERM = 15;

    private final MethodHandle kill;

    private PosixSignals(MethodHandle kill) {
        this.kill = kill;
    }

    @SuppressWarnings("restricted") // kill(2) is a plain libc call; envd is started with --enable-native-access
    static PosixSignals load() {
        Linker linker = Linker.nativeLinker();
        MethodHandle kill = linker.defaultLookup().find("kill")
                .map(address -> linker.downcallHandle(address, FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT)))
                .orElseThrow(() -> new IllegalStateException("libc has no kill()"));
        return new PosixSignals(kill);
    }

    /** Signals the process group led by {@code pid}, falling back to the process alone. True if delivered. */
    boolean signalGroup(long pid, int signal) {
        return call(-(int) pid, signal) || call((int) pid, signal) || fallback(pid, signal);
    }

    private boolean call(int target, int signal) {
        try {
            return (int) kill.invokeExact(target, signal) == 0;
        } catch (Throwable e) {
            return false;
        }
    }

    private static boolean fallback(long pid, int signal) {
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        return handle.map(h -> signal == SIGKILL ? h.destroyForcibly() : h.destroy()).orElse(false);
    }
}
