package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.SandboxId;
import java.util.List;
import java.util.Optional;

/**
 * A build's steps in its sandbox, through envd: RUN as the step's user, COPY from the uploaded files ({@link
 * CopyStep}), ENV, WORKDIR and USER on the {@link BuildState}, and E2B's start and ready commands; every line the
 * commands print goes to the build's log.
 */
final class BuildSteps {
    /** Where a template's start command writes its output, inside its sandboxes. */
    static final String START_LOG = "/var/log/agentenv/start-cmd.log";
    /** How often the ready command is tried, half a second apart (two minutes). */
    static final int READY_ATTEMPTS = 240;

    private final SandboxGuests guests;
    private final CopyStep copies;
    private final BuildLog log;

    BuildSteps(SandboxGuests guests, CopyStep copies, BuildLog log) {
        this.guests = requireNonNull(guests, "guests is null");
        this.copies = requireNonNull(copies, "copies is null");
        this.log = requireNonNull(log, "log is null");
    }

    void step(BuildRecord build, SandboxId sandbox, String index, TemplateBuilder.Step step, BuildState state)
            throws BuildFailed {
        Optional<String> name = Optional.of(index);
        List<String> args = step.args();
        switch (step.type()) {
            case "RUN" -> {
                if (args.isEmpty() || args.getFirst().isBlank()) {
                    throw new BuildFailed(name, "step " + index + ": RUN needs a command");
                }
                String user = args.size() > 1 && !args.get(1).isBlank() ? args.get(1) : state.user;
                log.info(build, name, "RUN " + args.getFirst() + (user.equals(state.user) ? "" : " (as " + user + ")"));
                GuestCommand.Exit exit = run(build, sandbox, name, args.getFirst(), user, state);
                if (!exit.succeeded()) {
                    throw new BuildFailed(
                            name,
                            "step " + index + " (RUN " + args.getFirst() + ") "
                                    + (exit.exited()
                                            ? "exited with code " + exit.exitCode()
                                            : "ended: " + exit.status()));
                }
            }
            case "ENV" -> {
                if (args.size() % 2 != 0) {
                    throw new BuildFailed(name, "step " + index + ": ENV needs name and value pairs");
                }
                state.apply(step);
                log.info(build, name, "ENV " + String.join(" ", args));
            }
            case "WORKDIR" -> {
                if (args.size() != 1 || args.getFirst().isBlank()) {
                    throw new BuildFailed(name, "step " + index + ": WORKDIR needs one path");
                }
                log.info(build, name, "WORKDIR " + args.getFirst());
                GuestCommand.Exit exit =
                        run(build, sandbox, name, "mkdir -p -- " + quote(args.getFirst()), "root", state);
                if (!exit.succeeded()) {
                    throw new BuildFailed(
                            name, "step " + index + " (WORKDIR " + args.getFirst() + ") could not be made");
                }
                state.apply(step);
            }
            case "USER" -> {
                if (args.size() != 1 || args.getFirst().isBlank()) {
                    throw new BuildFailed(name, "step " + index + ": USER needs one user name");
                }
                state.apply(step);
                log.info(build, name, "USER " + args.getFirst());
            }
            case "COPY" -> {
                String script;
                try {
                    script = copies.prepare(
                            sandbox,
                            build,
                            index,
                            step,
                            state.user,
                            state.workdir,
                            line -> log.info(build, name, line));
                } catch (CopyStep.Failure e) {
                    throw new BuildFailed(name, e.getMessage());
                }
                GuestCommand.Exit exit = run(build, sandbox, name, script, "root", state);
                if (!exit.succeeded()) {
                    throw new BuildFailed(
                            name,
                            CopyStep.describe(index, step) + " "
                                    + (exit.exited()
                                            ? "exited with code " + exit.exitCode()
                                            : "ended: " + exit.status()));
                }
            }
            default -> throw new BuildFailed(name, "step " + index + ": unknown step type " + step.type());
        }
    }

    /**
     * E2B's start and ready commands: the start command is left running in the background (as the current USER, with
     * the ENV and in the WORKDIR so far; its output goes to {@value #START_LOG}); the ready command is then run every
     * half second until it succeeds, at most {@link #READY_ATTEMPTS} times. The template is captured after that with
     * memory, so its sandboxes start with the start command running and ready.
     */
    void startAndAwaitReady(
            BuildRecord build,
            SandboxId sandbox,
            Optional<String> startCmd,
            Optional<String> readyCmd,
            BuildState state)
            throws BuildFailed {
        Optional<String> step = Optional.of("finalize");
        if (startCmd.isPresent()) {
            String start = startCmd.get();
            log.info(build, step, "START " + start);
            // the log belongs to the start command's user, who may not write /var/log
            GuestCommand.Exit prepared = run(
                    build,
                    sandbox,
                    step,
                    "mkdir -p " + quote(START_LOG.substring(0, START_LOG.lastIndexOf('/'))) + " && : > "
                            + quote(START_LOG) + " && chown " + quote(state.user) + " " + quote(START_LOG),
                    "root",
                    state);
            if (!prepared.succeeded()) {
                throw new BuildFailed(step, "the start command's log could not be made for user " + state.user);
            }
            String script = "( " + start + "\n) </dev/null >" + quote(START_LOG) + " 2>&1 &";
            GuestCommand.Exit started = run(build, sandbox, step, script, state.user, state);
            if (!started.succeeded()) {
                throw new BuildFailed(
                        step, "the start command could not be started (exit code " + started.exitCode() + ")");
            }
        }
        if (readyCmd.isPresent()) {
            String ready = readyCmd.get();
            log.info(build, step, "waiting for the ready command: " + ready);
            String script = "n=0; until ( " + ready + "\n) >/dev/null 2>&1; do n=$((n+1)); if [ \"$n\" -ge "
                    + READY_ATTEMPTS + " ]; then exit 124; fi; sleep 0.5; done";
            GuestCommand.Exit exit = run(build, sandbox, step, script, state.user, state);
            if (!exit.succeeded()) {
                if (startCmd.isPresent()) {
                    log.info(build, step, "the start command's output:");
                    run(build, sandbox, step, "tail -n 50 " + quote(START_LOG), "root", state);
                }
                throw new BuildFailed(
                        step,
                        exit.exited() && exit.exitCode() == 124
                                ? "the ready command did not succeed within " + READY_ATTEMPTS / 2 + " s: " + ready
                                : "the ready command ended: " + exit.status());
            }
            log.info(build, step, "ready");
        }
    }

    /** Runs {@code script} with the build's state as {@code user}, its output into the build log. */
    GuestCommand.Exit run(
            BuildRecord build, SandboxId sandbox, Optional<String> step, String script, String user, BuildState state)
            throws BuildFailed {
        BuildLog.Lines out = log.lines(build, step);
        BuildLog.Lines err = log.lines(build, step);
        try {
            GuestCommand.Exit exit = guests.run(
                    sandbox,
                    GuestCommand.shell(script, Optional.of(user), state.env, state.workdir),
                    new GuestCommand.Output() {
                        @Override
                        public void stdout(byte[] chunk) {
                            out.add(chunk);
                        }

                        @Override
                        public void stderr(byte[] chunk) {
                            err.add(chunk);
                        }
                    });
            return exit;
        } catch (AgentEnvException e) {
            throw new BuildFailed(step, "step " + step.orElse("") + ": " + e.getMessage());
        } finally {
            out.flush();
            err.flush();
        }
    }

    static String quote(String text) {
        return "'" + text.replace("'", "'\\''") + "'";
    }
}
