package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What a build says: its log lines and its final status, in the build store. */
final class BuildLog {
    private static final Logger log = LoggerFactory.getLogger(BuildLog.class);
    /** A longer line of a command's output is cut into lines of this many bytes. */
    static final int MAX_LINE = 8192;

    private final TemplateBuildStore store;
    private final Clock clock;

    BuildLog(TemplateBuildStore store, Clock clock) {
        this.store = requireNonNull(store, "store is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    void info(BuildRecord build, Optional<String> step, String message) {
        line(build, BuildLogLine.Level.INFO, step, message);
    }

    void line(BuildRecord build, BuildLogLine.Level level, Optional<String> step, String message) {
        store.appendLog(build.id(), new BuildLogLine(clock.instant(), level, message, step));
    }

    /** Ends the build with {@code status}, unless it has ended already. */
    void finish(BuildRecord build, BuildRecord.Status status, Optional<String> reason, Optional<String> step) {
        BuildRecord current = store.build(build.id()).orElse(build);
        if (current.status().finished()) {
            return;
        }
        BuildRecord done = current.with(status, reason, step, clock.instant());
        if (!store.updateBuild(done, current.status())) {
            log.atWarn().addKeyValue("build_id", build.id()).log("a build's status changed under its builder");
        }
    }

    /** A command's output as lines of the build's log. */
    Lines lines(BuildRecord build, Optional<String> step) {
        return new Lines(build, step);
    }

    /** A command's output as log lines: a line per newline, long lines cut, the rest when the command ends. */
    final class Lines {
        private final BuildRecord build;
        private final Optional<String> step;
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        private Lines(BuildRecord build, Optional<String> step) {
            this.build = build;
            this.step = step;
        }

        synchronized void add(byte[] chunk) {
            for (byte b : chunk) {
                if (b == '\n') {
                    emit();
                } else {
                    pending.write(b);
                    if (pending.size() >= MAX_LINE) {
                        emit();
                    }
                }
            }
        }

        synchronized void flush() {
            if (pending.size() > 0) {
                emit();
            }
        }

        private void emit() {
            info(build, step, pending.toString(StandardCharsets.UTF_8));
            pending.reset();
        }
    }
}
