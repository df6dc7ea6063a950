package io.agentenv.envd.session;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox-wide state set by {@code POST /init}: access token, env vars, default user and workdir. Nothing in it
 * refers to a host connection, so it survives a CRIU checkpoint/restore as is.
 */
public final class Session {
    private static final Logger log = LoggerFactory.getLogger(Session.class);
    private static final Duration REPORTED_SKEW = Duration.ofSeconds(1);

    private final Clock clock;
    private final AtomicReference<SessionState> state = new AtomicReference<>(SessionState.initial());

    public Session(Clock clock) {
        this.clock = requireNonNull(clock, "clock is null");
    }

    public SessionState current() {
        return state.get();
    }

    public Optional<String> defaultUser() {
        return state.get().defaultUser();
    }

    /** True when no token is set, or when {@code presented} equals it (compared in constant time). */
    public boolean isAuthorized(String presented) {
        Optional<String> token = state.get().accessToken();
        if (token.isEmpty()) {
            return true;
        }
        if (presented == null) {
            return false;
        }
        return MessageDigest.isEqual(
                token.get().getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Takes the session back to {@code earlier} (a value {@link #current()} returned), without a log line: for envd's
     * own request warm-up, which initialises the session as a host would and must leave no trace of it.
     */
    public void restore(SessionState earlier) {
        state.set(requireNonNull(earlier, "earlier is null"));
    }

    public boolean hasAccessToken() {
        return state.get().accessToken().isPresent();
    }

    /**
     * Applies an init request: env vars are merged key by key; token, user and workdir replace the old values when
     * given. The system clock is not set (a container shares the host kernel's clock); the skew is recorded and logged.
     * The init is logged at INFO (so in the journal {@code GET /logs} reads), or at DEBUG when it sets nothing.
     */
    public void init(InitRequest request) {
        Duration skew = request.timestamp()
                .map(t -> Duration.between(clock.instant(), t))
                .orElse(Duration.ZERO);
        Optional<Path> workdir =
                request.defaultWorkdir().filter(w -> !w.isEmpty()).map(Path::of);
        workdir.ifPresent(w -> {
            if (!w.isAbsolute()) {
                throw new IllegalArgumentException("defaultWorkdir must be an absolute path");
            }
        });
        state.updateAndGet(old -> {
            Map<String, String> env = new HashMap<>(old.envVars());
            env.putAll(request.envVars());
            return new SessionState(
                    request.accessToken().filter(t -> !t.isEmpty()).or(old::accessToken),
                    env,
                    request.defaultUser().filter(u -> !u.isEmpty()).or(old::defaultUser),
                    workdir.or(old::defaultWorkdir),
                    skew);
        });
        if (skew.abs().compareTo(REPORTED_SKEW) > 0) {
            log.atWarn().addKeyValue("skew_ms", skew.toMillis()).log("host clock differs from the sandbox clock");
        }
        // an init that sets nothing (a warm pool's, run before anyone claimed the sandbox) is not its user's history
        boolean setsNothing = request.accessToken().filter(t -> !t.isEmpty()).isEmpty()
                && request.envVars().isEmpty()
                && request.defaultUser().filter(u -> !u.isEmpty()).isEmpty()
                && workdir.isEmpty();
        (setsNothing ? log.atDebug() : log.atInfo())
                .addKeyValue("env_vars", request.envVars().size())
                .addKeyValue("token_set", request.accessToken().isPresent())
                .addKeyValue("default_user", request.defaultUser().orElse(""))
                .log("session initialised");
    }
}
