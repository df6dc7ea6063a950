package io.agentenv.libc;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * libc functions called over FFM that report errno: the one place their downcall handles are made. A handle from
 * {@link #function} takes a segment of {@link #CALL_STATE} as its first argument; {@link #errno} reads it after the call.
 */
public final class Libc {

    /** The layout of the call state each handle of {@link #function} captures errno into. */
    public static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();

    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private Libc() {}

    /**
     * libc's {@code name}, capturing errno. Making a downcall is a restricted method: {@code descriptor} must match
     * libc's declaration.
     */
    @SuppressWarnings("restricted")
    public static MethodHandle function(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        Linker linker = Linker.nativeLinker();
        Linker.Option[] all = Arrays.copyOf(options, options.length + 1);
        all[options.length] = Linker.Option.captureCallState("errno");
        return linker.downcallHandle(
                linker.defaultLookup()
                        .find(name)
                        .orElseThrow(() -> new IllegalStateException("no " + name + " in libc")),
                descriptor,
                all);
    }

    /** The errno a call left in {@code state} (a segment of {@link #CALL_STATE}). */
    public static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }
}
