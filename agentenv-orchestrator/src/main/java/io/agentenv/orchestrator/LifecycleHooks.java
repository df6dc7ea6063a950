package io.agentenv.orchestrator;

import io.agentenv.spi.SandboxId;
import java.util.Optional;
import java.util.UUID;

/**
 * The operator's custom extension, called at sandbox lifecycle points (study §4). The orchestrator decides when to
 * call and what a failure means; an implementation only makes the call and reports failures as a typed
 * {@link HookException}. Implementations must be safe for concurrent use and must not retry on their own.
 * The orchestrator never holds a lock while calling.
 */
public interface LifecycleHooks {
    /** False when no extension is configured: nothing is called and non-empty params are refused. */
    boolean enabled();

    /** Before a fresh (non-snapshot) start; returns the extension's non-blank extraBootArgs, if any. */
    Optional<String> startFresh(HookStart start) throws HookException;

    /** Before every snapshot-based start: create from a snapshot, resume after pause, each fork child. */
    void startResume(HookStart start) throws HookException;

    /**
     * The user's patch (raw JSON object text, passed on verbatim); returns the full new params as raw JSON object
     * text ({@code "{}"} when the extension answered none).
     */
    String patchParams(SandboxId sandboxId, String patch) throws HookException;

    /** The instance {@code instanceId} of the sandbox has stopped. The orchestrator treats failures as best-effort. */
    void stop(SandboxId sandboxId, UUID instanceId) throws HookException;

    /** No extension configured: {@link #enabled()} is false and the calls do nothing. */
    static LifecycleHooks none() {
        return NoHooks.INSTANCE;
    }

    /** The implementation of {@link #none()}. */
    enum NoHooks implements LifecycleHooks {
        INSTANCE;

        @Override
        public boolean enabled() {
            return false;
        }

        @Override
        public Optional<String> startFresh(HookStart start) {
            return Optional.empty();
        }

        @Override
        public void startResume(HookStart start) {}

        @Override
        public String patchParams(SandboxId sandboxId, String patch) {
            return patch;
        }

        @Override
        public void stop(SandboxId sandboxId, UUID instanceId) {}
    }
}
