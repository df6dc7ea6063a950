package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Template builds (E2B's build API). A build gets a sandbox of its base (a template or snapshot, or {@code base} for
 * E2B's default image), runs its steps there through envd (RUN as the step's user, with the environment and working
 * directory the ENV, WORKDIR and USER steps so far set), then captures the sandbox into the catalog with the template's
 * id and names as aliases, so that sandboxes are created from it by either; the previous build's snapshot is then
 * deleted unless a tag names it ({@link TemplateRegistry}). Every stage and every line the steps print goes to the build's log; a failure ends the build in ERROR with
 * the step that failed. The build sandbox is killed whatever happens.
 *
 * <p>Builds run one per virtual thread. A later build of the same template supersedes a running one, which ends in
 * ERROR at its next step. A restart fails the builds that were running ({@link #recover()}).
 */
public final class TemplateBuilder implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TemplateBuilder.class);
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,127}");
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    /** E2B's default base image ({@code Template().fromBaseImage()}): this server's {@code base} template. */
    private static final String E2B_BASE_IMAGE = "e2bdev/base";

    public static final String BASE_TEMPLATE = "base";
    /** The prefix of the templates images become ({@code img-<digest hex>}). */
    public static final String IMAGE_TEMPLATE_PREFIX = "img-";
    /** The metadata key that marks a build's sandbox, with the build id as its value. */
    public static final String BUILD_METADATA = "agentenv.build";

    private static final Duration BUILD_SANDBOX_TTL = Duration.ofHours(1);
    /** Where a template's start command writes its output, inside its sandboxes. */
    static final String START_LOG = "/var/log/agentenv/start-cmd.log";
    /** How often the ready command is tried, half a second apart (two minutes). */
    static final int READY_ATTEMPTS = 240;

    private static final int MAX_LOG_PAGE = 1000;
    private static final int MAX_LINE = 8192;

    /** One step as the SDK sends it: RUN, COPY, ENV, WORKDIR or USER with its arguments. */
    public record Step(String type, List<String> args, Optional<String> filesHash, boolean force) {
        public Step {
            requireNonNull(type, "type is null");
            args = List.copyOf(args);
            requireNonNull(filesHash, "filesHash is null");
        }
    }

    /** What a build starts from and does: exactly one of fromTemplate and fromImage. */
    public record BuildSpec(
            Optional<String> fromTemplate,
            Optional<String> fromImage,
            Optional<ImageSource.Credentials> registryCredentials,
            List<Step> steps,
            Optional<String> startCmd,
            Optional<String> readyCmd,
            boolean force) {
        public BuildSpec {
            requireNonNull(fromTemplate, "fromTemplate is null");
            requireNonNull(fromImage, "fromImage is null");
            requireNonNull(registryCredentials, "registryCredentials is null");
            steps = List.copyOf(steps);
            requireNonNull(startCmd, "startCmd is null");
            requireNonNull(readyCmd, "readyCmd is null");
        }
    }

    /** A requested template and its new build. */
    public record Requested(TemplateRecord template, BuildRecord build) {}

    /** A build and its log from the offset asked for. */
    public record Status(BuildRecord build, List<BuildLogLine> logs) {}

    private final Orchestrator orchestrator;
    private final SandboxGuests guests;
    private final TemplateBuildStore store;
    private final ImageSource images;
    private final String defaultUser;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();
    private final Executor threads;
    private final CopyStep copies;
    private final StepCache layers;
    /** The build running per template: a later one supersedes it. */
    private final Map<TemplateId, String> running = new ConcurrentHashMap<>();

    private final TemplateRegistry registry;

    /**
     * @param images where {@code fromImage} bases are pulled from
     * @param files the uploads COPY steps take
     */
    public TemplateBuilder(
            Orchestrator orchestrator,
            SandboxGuests guests,
            TemplateBuildStore store,
            ImageSource images,
            TemplateFiles files,
            String defaultUser,
            Clock clock) {
        this(
                orchestrator,
                guests,
                store,
                images,
                files,
                defaultUser,
                clock,
                Executors.newThreadPerTaskExecutor(
                        Thread.ofVirtual().name("aenv-template-build-", 0).factory()));
    }

    /** With the executor builds run on (tests: the calling thread, so that a build is over when start returns). */
    TemplateBuilder(
            Orchestrator orchestrator,
            SandboxGuests guests,
            TemplateBuildStore store,
            ImageSource images,
            TemplateFiles files,
            String defaultUser,
            Clock clock,
            Executor threads) {
        this.copies = new CopyStep(guests, files);
        this.layers = new StepCache(store, orchestrator, clock);
        this.threads = requireNonNull(threads, "threads is null");
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.guests = requireNonNull(guests, "guests is null");
        this.store = requireNonNull(store, "store is null");
        this.images = requireNonNull(images, "images is null");
        this.defaultUser = requireNonNull(defaultUser, "defaultUser is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.registry = registry(orchestrator, store, files, clock);
    }

    /** The registry of this builder's templates; creates resolve {@code name:tag} through it from now on. */
    private static TemplateRegistry registry(
            Orchestrator orchestrator, TemplateBuildStore store, TemplateFiles files, Clock clock) {
        TemplateRegistry registry = new TemplateRegistry(orchestrator, store, files, clock);
        orchestrator.resolveTagsWith(registry::snapshotOfTag);
        return registry;
    }

    /** The templates as objects: their list, tags and deletion. */
    public TemplateRegistry registry() {
        return registry;
    }

    /**
     * Fails the builds a restart found waiting or building: their sandboxes went with the old process (or are
     * removed by the sandbox recovery), so nothing can finish them.
     */
    public void recover() {
        for (BuildRecord build : store.unfinishedBuilds()) {
            finish(
                    build,
                    BuildRecord.Status.ERROR,
                    Optional.of("the server restarted during the build"),
                    Optional.empty());
        }
    }

    /**
     * A new build of the template named {@code name} (created when there is none; its tag, after a colon, is added
     * to {@code tags}), or of a new unnamed template. INVALID_ARGUMENT for a bad name or tag, CONFLICT when the name
     * is a snapshot's alias or a built-in template.
     */
    public Requested request(Optional<String> name, List<String> tags, Resources resources) {
        requireNonNull(name, "name is null");
        requireNonNull(tags, "tags is null");
        requireNonNull(resources, "resources is null");
        List<String> allTags = new ArrayList<>(tags);
        Optional<String> plainName = name.map(n -> {
            int colon = n.indexOf(':');
            if (colon >= 0) {
                allTags.add(n.substring(colon + 1));
                return n.substring(0, colon);
            }
            return n;
        });
        plainName.ifPresent(TemplateBuilder::validateName);
        allTags.forEach(TemplateBuilder::validateTag);
        Instant now = clock.instant();
        Optional<TemplateRecord> existing = plainName.flatMap(store::findTemplate);
        TemplateRecord template;
        if (existing.isPresent()) {
            template = new TemplateRecord(
                    existing.get().id(),
                    existing.get().names(),
                    resources,
                    existing.get().createdAt(),
                    now);
        } else {
            plainName.ifPresent(this::requireFree);
            template =
                    new TemplateRecord(newTemplateId(), plainName.map(List::of).orElse(List.of()), resources, now, now);
        }
        if (!store.insertTemplate(template)) {
            throw new AgentEnvException(ErrorKind.CONFLICT, "template name " + plainName.orElse("") + " is taken");
        }
        BuildRecord build = new BuildRecord(
                UUID.randomUUID().toString(),
                template.id(),
                BuildRecord.Status.WAITING,
                Optional.empty(),
                Optional.empty(),
                allTags,
                now,
                now);
        store.insertBuild(build);
        return new Requested(template, build);
    }

    /**
     * Starts a WAITING build on its own thread. NOT_FOUND (no such template or build of it), CONFLICT (the build was
     * started already), INVALID_ARGUMENT (not exactly one base).
     */
    public void start(TemplateId templateId, String buildId, BuildSpec spec) {
        requireNonNull(spec, "spec is null");
        BuildRecord build = build(templateId, buildId);
        if (spec.fromTemplate().isPresent() == spec.fromImage().isPresent()) {
            throw AgentEnvException.invalidArgument("exactly one of fromImage and fromTemplate must be given");
        }
        TemplateRecord template = store.findTemplate(templateId.value())
                .orElseThrow(() ->
                        new AgentEnvException(ErrorKind.NOT_FOUND, "template " + templateId.value() + " not found"));
        BuildRecord building =
                build.with(BuildRecord.Status.BUILDING, Optional.empty(), Optional.empty(), clock.instant());
        if (!store.updateBuild(building, BuildRecord.Status.WAITING)) {
            throw new AgentEnvException(ErrorKind.CONFLICT, "build " + buildId + " was started already");
        }
        running.put(templateId, buildId);
        threads.execute(() -> run(template, building, spec));
    }

    /** A build with its log lines from {@code logsOffset} (at most 1000). NOT_FOUND. */
    public Status status(TemplateId templateId, String buildId, int logsOffset) {
        if (logsOffset < 0) {
            throw AgentEnvException.invalidArgument("logsOffset must be >= 0");
        }
        BuildRecord build = build(templateId, buildId);
        return new Status(build, store.logs(buildId, logsOffset, MAX_LOG_PAGE));
    }

    public List<BuildRecord> builds(TemplateId template) {
        return store.builds(requireNonNull(template, "template is null"));
    }

    private BuildRecord build(TemplateId templateId, String buildId) {
        requireNonNull(templateId, "templateId is null");
        requireNonNull(buildId, "buildId is null");
        return store.build(buildId)
                .filter(b -> b.template().equals(templateId))
                .orElseThrow(() -> new AgentEnvException(
                        ErrorKind.NOT_FOUND, "build " + buildId + " of template " + templateId.value() + " not found"));
    }

    // ---- the build ---------------------------------------------------------------------------------------------

    /** Why a build stops early: the step (when one failed) and the reason, for the build's status. */
    private static final class Failed extends Exception {
        private static final long serialVersionUID = 1L;
        private final Optional<String> step;

        Failed(Optional<String> step, String reason) {
            super(reason, null, false, false);
            this.step = step;
        }
    }

    private void run(TemplateRecord template, BuildRecord build, BuildSpec spec) {
        Optional<SandboxId> sandbox = Optional.empty();
        try {
            Base base = base(build, spec);
            info(
                    build,
                    Optional.of("base"),
                    "building template " + template.id().value() + " from " + base.describe());
            // the state the steps start from: the server's default user, or what the image's config says; the base's
            // own environment is envd's default already, the ENV steps' go with every command and into the template
            BuildState initial = new BuildState(defaultUser, Optional.empty(), new LinkedHashMap<>());
            base.image().ifPresent(image -> applyImageConfig(image, initial));
            List<String> keys = stepKeys(baseIdentity(base), spec.steps(), initial.copy());
            Optional<StepCache.Resume> resume = layers.resumePoint(spec.steps(), keys, spec.force());
            SandboxView created;
            try {
                created = createBuildSandbox(
                        build, resume.map(r -> r.snapshot().value()).orElse(base.template()));
            } catch (AgentEnvException e) {
                if (resume.isEmpty()) {
                    throw new Failed(Optional.of("base"), "the build sandbox could not be created: " + e.getMessage());
                }
                info(build, Optional.of("base"), "the cached layer did not start (" + e.getMessage() + "): rebuilding");
                layers.forget(resume.get());
                resume = Optional.empty();
                try {
                    created = createBuildSandbox(build, base.template());
                } catch (AgentEnvException again) {
                    throw new Failed(
                            Optional.of("base"), "the build sandbox could not be created: " + again.getMessage());
                }
            }
            sandbox = Optional.of(created.id());
            BuildState state = initial.copy();
            int done = resume.map(StepCache.Resume::done).orElse(0);
            for (int i = 0; i < done; i++) {
                Step skipped = spec.steps().get(i);
                apply(skipped, state);
                info(
                        build,
                        Optional.of(String.valueOf(i + 1)),
                        "cached: " + skipped.type() + " " + String.join(" ", skipped.args()));
            }
            for (int i = done; i < spec.steps().size(); i++) {
                requireCurrent(template, build);
                Step next = spec.steps().get(i);
                step(build, created.id(), String.valueOf(i + 1), next, state);
                if (StepCache.layered(next)) {
                    layers.capture(
                            created.id(),
                            keys.get(i),
                            state.env,
                            new GuestDefaults(Optional.of(state.user), state.workdir));
                }
            }
            if (spec.startCmd().isPresent() || spec.readyCmd().isPresent()) {
                requireCurrent(template, build);
                startAndAwaitReady(build, created.id(), spec, state);
            }
            requireCurrent(template, build);
            info(build, Optional.of("finalize"), "capturing the template");
            Optional<TemplateId> previous = orchestrator
                    .findTemplate(template.id().value())
                    .filter(t -> t.source() == TemplateView.Source.SNAPSHOT)
                    .map(TemplateView::id);
            List<String> aliases = new ArrayList<>();
            aliases.add(template.id().value());
            aliases.addAll(template.names());
            // the last USER and WORKDIR are where the template's sandboxes run commands that name neither
            SnapshotView captured = orchestrator.snapshotAsTemplate(
                    created.id(), aliases, state.env, new GuestDefaults(Optional.of(state.user), state.workdir));
            registry.built(build, captured.id(), previous);
            info(build, Optional.of("finalize"), "template " + template.id().value() + " is ready");
            finish(build, BuildRecord.Status.READY, Optional.empty(), Optional.empty());
        } catch (Failed e) {
            line(build, BuildLogLine.Level.ERROR, e.step, e.getMessage());
            finish(build, BuildRecord.Status.ERROR, Optional.of(e.getMessage()), e.step);
        } catch (RuntimeException e) {
            log.atWarn()
                    .addKeyValue("template_id", template.id().value())
                    .addKeyValue("build_id", build.id())
                    .setCause(e)
                    .log("template build failed");
            String reason = "the build failed: " + e.getMessage();
            line(build, BuildLogLine.Level.ERROR, Optional.empty(), reason);
            finish(build, BuildRecord.Status.ERROR, Optional.of(reason), Optional.empty());
        } finally {
            running.remove(template.id(), build.id());
            sandbox.ifPresent(this::killQuietly);
            evictLayers();
        }
    }

    private SandboxView createBuildSandbox(BuildRecord build, String from) {
        return orchestrator.create(new CreateSandbox(
                from,
                BUILD_SANDBOX_TTL,
                TimeoutAction.KILL,
                PauseMode.WITH_MEMORY,
                false,
                Map.of(),
                Map.of(BUILD_METADATA, build.id()),
                NetworkPolicy.DEFAULT,
                CustomExtensionParams.EMPTY,
                true));
    }

    /** What the base is, as exactly as it is known: an image's digest, a snapshot's id, a built-in template's build. */
    private String baseIdentity(Base base) {
        if (base.image().isPresent()) {
            return "image " + base.image().get().digest();
        }
        return orchestrator
                .findTemplate(base.template())
                .map(t -> "template " + t.id().value() + " "
                        + t.updatedAt().map(Object::toString).orElse("-"))
                .orElse("template " + base.template());
    }

    /** Each step's cache key, the state advancing through the steps as the build would advance it. */
    private List<String> stepKeys(String baseIdentity, List<Step> steps, BuildState state) {
        List<String> keys = new ArrayList<>();
        String parent = StepCache.baseKey(baseIdentity, defaultUser);
        for (Step step : steps) {
            parent = StepCache.stepKey(parent, step, state.user, state.env, state.workdir);
            keys.add(parent);
            apply(step, state);
        }
        return keys;
    }

    /** What a step does to the build's state (ENV, USER, WORKDIR); nothing for the others. Malformed ones: nothing. */
    private static void apply(Step step, BuildState state) {
        List<String> args = step.args();
        switch (step.type()) {
            case "ENV" -> {
                if (args.size() % 2 == 0) {
                    for (int i = 0; i < args.size(); i += 2) {
                        state.env.put(args.get(i), args.get(i + 1));
                    }
                }
            }
            case "WORKDIR" -> {
                if (args.size() == 1 && !args.getFirst().isBlank()) {
                    state.workdir = Optional.of(args.getFirst());
                }
            }
            case "USER" -> {
                if (args.size() == 1 && !args.getFirst().isBlank()) {
                    state.user = args.getFirst();
                }
            }
            default -> {}
        }
    }

    /** The user, working directory and environment the steps so far set. */
    private static final class BuildState {
        String user;
        Optional<String> workdir;
        final Map<String, String> env;

        BuildState(String user, Optional<String> workdir, Map<String, String> env) {
            this.user = user;
            this.workdir = workdir;
            this.env = env;
        }

        BuildState copy() {
            return new BuildState(user, workdir, new LinkedHashMap<>(env));
        }
    }

    private void step(BuildRecord build, SandboxId sandbox, String index, Step step, BuildState state) throws Failed {
        Optional<String> name = Optional.of(index);
        List<String> args = step.args();
        switch (step.type()) {
            case "RUN" -> {
                if (args.isEmpty() || args.getFirst().isBlank()) {
                    throw new Failed(name, "step " + index + ": RUN needs a command");
                }
                String user = args.size() > 1 && !args.get(1).isBlank() ? args.get(1) : state.user;
                info(build, name, "RUN " + args.getFirst() + (user.equals(state.user) ? "" : " (as " + user + ")"));
                GuestCommand.Exit exit = run(build, sandbox, name, args.getFirst(), user, state);
                if (!exit.succeeded()) {
                    throw new Failed(
                            name,
                            "step " + index + " (RUN " + args.getFirst() + ") "
                                    + (exit.exited()
                                            ? "exited with code " + exit.exitCode()
                                            : "ended: " + exit.status()));
                }
            }
            case "ENV" -> {
                if (args.size() % 2 != 0) {
                    throw new Failed(name, "step " + index + ": ENV needs name and value pairs");
                }
                apply(step, state);
                info(build, name, "ENV " + String.join(" ", args));
            }
            case "WORKDIR" -> {
                if (args.size() != 1 || args.getFirst().isBlank()) {
                    throw new Failed(name, "step " + index + ": WORKDIR needs one path");
                }
                info(build, name, "WORKDIR " + args.getFirst());
                GuestCommand.Exit exit =
                        run(build, sandbox, name, "mkdir -p -- " + quote(args.getFirst()), "root", state);
                if (!exit.succeeded()) {
                    throw new Failed(name, "step " + index + " (WORKDIR " + args.getFirst() + ") could not be made");
                }
                apply(step, state);
            }
            case "USER" -> {
                if (args.size() != 1 || args.getFirst().isBlank()) {
                    throw new Failed(name, "step " + index + ": USER needs one user name");
                }
                apply(step, state);
                info(build, name, "USER " + args.getFirst());
            }
            case "COPY" -> {
                String script;
                try {
                    script = copies.prepare(
                            sandbox, build, index, step, state.user, state.workdir, line -> info(build, name, line));
                } catch (CopyStep.Failure e) {
                    throw new Failed(name, e.getMessage());
                }
                GuestCommand.Exit exit = run(build, sandbox, name, script, "root", state);
                if (!exit.succeeded()) {
                    throw new Failed(
                            name,
                            CopyStep.describe(index, step) + " "
                                    + (exit.exited()
                                            ? "exited with code " + exit.exitCode()
                                            : "ended: " + exit.status()));
                }
            }
            default -> throw new Failed(name, "step " + index + ": unknown step type " + step.type());
        }
    }

    /**
     * E2B's start and ready commands: the start command is left running in the background (as the current USER, with
     * the ENV and in the WORKDIR so far; its output goes to {@value #START_LOG}); the ready command is then run every
     * half second until it succeeds, at most {@link #READY_ATTEMPTS} times. The template is captured after that with
     * memory, so its sandboxes start with the start command running and ready.
     */
    private void startAndAwaitReady(BuildRecord build, SandboxId sandbox, BuildSpec spec, BuildState state)
            throws Failed {
        Optional<String> step = Optional.of("finalize");
        if (spec.startCmd().isPresent()) {
            String start = spec.startCmd().get();
            info(build, step, "START " + start);
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
                throw new Failed(step, "the start command's log could not be made for user " + state.user);
            }
            String script = "( " + start + "\n) </dev/null >" + quote(START_LOG) + " 2>&1 &";
            GuestCommand.Exit started = run(build, sandbox, step, script, state.user, state);
            if (!started.succeeded()) {
                throw new Failed(step, "the start command could not be started (exit code " + started.exitCode() + ")");
            }
        }
        if (spec.readyCmd().isPresent()) {
            String ready = spec.readyCmd().get();
            info(build, step, "waiting for the ready command: " + ready);
            String script = "n=0; until ( " + ready + "\n) >/dev/null 2>&1; do n=$((n+1)); if [ \"$n\" -ge "
                    + READY_ATTEMPTS + " ]; then exit 124; fi; sleep 0.5; done";
            GuestCommand.Exit exit = run(build, sandbox, step, script, state.user, state);
            if (!exit.succeeded()) {
                if (spec.startCmd().isPresent()) {
                    info(build, step, "the start command's output:");
                    run(build, sandbox, step, "tail -n 50 " + quote(START_LOG), "root", state);
                }
                throw new Failed(
                        step,
                        exit.exited() && exit.exitCode() == 124
                                ? "the ready command did not succeed within " + READY_ATTEMPTS / 2 + " s: " + ready
                                : "the ready command ended: " + exit.status());
            }
            info(build, step, "ready");
        }
    }

    private GuestCommand.Exit run(
            BuildRecord build, SandboxId sandbox, Optional<String> step, String script, String user, BuildState state)
            throws Failed {
        LogLines out = new LogLines(build, step, BuildLogLine.Level.INFO);
        LogLines err = new LogLines(build, step, BuildLogLine.Level.INFO);
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
            throw new Failed(step, "step " + step.orElse("") + ": " + e.getMessage());
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** A command's output as log lines: a line per newline, long lines cut, the rest when the command ends. */
    private final class LogLines {
        private final BuildRecord build;
        private final Optional<String> step;
        private final BuildLogLine.Level level;
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        LogLines(BuildRecord build, Optional<String> step, BuildLogLine.Level level) {
            this.build = build;
            this.step = step;
            this.level = level;
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
            line(build, level, step, pending.toString(StandardCharsets.UTF_8));
            pending.reset();
        }
    }

    private void requireCurrent(TemplateRecord template, BuildRecord build) throws Failed {
        String current = running.get(template.id());
        if (current != null && !current.equals(build.id())) {
            throw new Failed(Optional.empty(), "superseded by build " + current + " of the same template");
        }
    }

    /**
     * What a build starts from: a template (or snapshot) by name, or a pulled image made a template of its own
     * ({@code img-} and its digest's first 16 hex digits; one per image, shared by every build from it).
     */
    private record Base(String template, Optional<String> reference, Optional<ImageSource.Image> image) {
        String describe() {
            return reference
                    .map(r -> "image " + r
                            + image.map(i -> " (" + i.digest() + ")").orElse(""))
                    .orElse(template);
        }
    }

    private Base base(BuildRecord build, BuildSpec spec) throws Failed {
        if (spec.fromTemplate().isPresent()) {
            return new Base(spec.fromTemplate().get(), Optional.empty(), Optional.empty());
        }
        String reference = spec.fromImage().orElseThrow();
        if (isE2bBaseImage(reference)) {
            return new Base(BASE_TEMPLATE, Optional.of(reference), Optional.empty());
        }
        Optional<String> step = Optional.of("base");
        info(build, step, "pulling " + reference);
        ImageSource.Image image;
        try {
            image = images.pull(reference, spec.registryCredentials(), line -> info(build, step, line));
        } catch (ImageSource.PullException e) {
            throw new Failed(step, "fromImage " + reference + ": " + e.getMessage());
        }
        String hex = image.digest().substring(image.digest().indexOf(':') + 1);
        TemplateId id = new TemplateId(IMAGE_TEMPLATE_PREFIX + hex.substring(0, Math.min(16, hex.length())));
        // the image's boot prepares it before its envd starts, so that envd's boot warm-up finds the account
        // commands run as and every build from the image starts prepared
        info(
                build,
                step,
                "preparing the image at its boot: the " + defaultUser + " account, /tmp and home directories");
        try {
            orchestrator.addImageTemplate(
                    id,
                    image.rootfs(),
                    provisioning(defaultUser, image.workdir().filter(w -> w.startsWith("/"))));
        } catch (AgentEnvException e) {
            throw new Failed(step, "fromImage " + reference + ": " + e.getMessage());
        }
        return new Base(id.value(), Optional.of(reference), Optional.of(image));
    }

    private static boolean isE2bBaseImage(String image) {
        String repository = image.contains("@") ? image.substring(0, image.indexOf('@')) : image;
        int colon = repository.lastIndexOf(':');
        if (colon > repository.lastIndexOf('/')) {
            repository = repository.substring(0, colon);
        }
        return repository.equals(E2B_BASE_IMAGE) || repository.equals("docker.io/" + E2B_BASE_IMAGE);
    }

    /** The image config's environment, working directory and (named) user as the steps' starting point. */
    private static void applyImageConfig(ImageSource.Image image, BuildState state) {
        for (String entry : image.env()) {
            int eq = entry.indexOf('=');
            if (eq > 0) {
                state.env.put(entry.substring(0, eq), entry.substring(eq + 1));
            }
        }
        image.workdir().filter(w -> w.startsWith("/")).ifPresent(w -> state.workdir = Optional.of(w));
        image.user()
                .map(u -> u.contains(":") ? u.substring(0, u.indexOf(':')) : u)
                .filter(u -> !u.isBlank() && !u.chars().allMatch(Character::isDigit))
                .ifPresent(u -> state.user = u);
    }

    /**
     * What an image's boot runs before its envd starts (see {@link Orchestrator#addImageTemplate}): the directories
     * and accounts every sandbox has (a {@code user} account with a home, as E2B's templates have, and passwordless
     * sudo where sudo is installed). A POSIX shell script (busybox or coreutils) that makes sure of /tmp, /etc/passwd and /etc/group with root, and
     * the account {@code user} with its group and home (the first free id from 1000, bash when there is one), and the
     * image's working directory (made at run time, as container runtimes do).
     */
    static String provisioning(String user, Optional<String> workdir) {
        String name = quote(user);
        return String.join(
                "\n",
                "set -e",
                "mkdir -p /tmp /root /etc /home"
                        + workdir.map(w -> " " + quote(w)).orElse(""),
                "chmod 1777 /tmp",
                "touch /etc/passwd /etc/group",
                "grep -q '^root:' /etc/passwd || echo 'root:x:0:0:root:/root:/bin/sh' >> /etc/passwd",
                "grep -q '^root:' /etc/group || echo 'root:x:0:' >> /etc/group",
                "u=" + name,
                "if ! grep -q \"^$u:\" /etc/passwd; then",
                "  id=1000",
                "  while cut -d: -f3 /etc/passwd /etc/group | grep -qx \"$id\"; do id=$((id+1)); done",
                "  grep -q \"^$u:\" /etc/group || echo \"$u:x:$id:\" >> /etc/group",
                "  gid=$(grep \"^$u:\" /etc/group | cut -d: -f3)",
                "  shell=/bin/sh; [ -x /bin/bash ] && shell=/bin/bash",
                "  echo \"$u:x:$id:$gid::/home/$u:$shell\" >> /etc/passwd",
                "  if [ -f /etc/shadow ]; then echo \"$u:!:1::::::\" >> /etc/shadow; fi",
                "  mkdir -p \"/home/$u\"",
                "  chown \"$id:$gid\" \"/home/$u\"",
                "fi",
                "if [ -d /etc/sudoers.d ] && [ ! -e \"/etc/sudoers.d/$u\" ]; then",
                "  echo \"$u ALL=(ALL:ALL) NOPASSWD: ALL\" > \"/etc/sudoers.d/$u\"",
                "  chmod 440 \"/etc/sudoers.d/$u\"",
                "fi");
    }

    private void finish(BuildRecord build, BuildRecord.Status status, Optional<String> reason, Optional<String> step) {
        BuildRecord current = store.build(build.id()).orElse(build);
        if (current.status().finished()) {
            return;
        }
        BuildRecord done = current.with(status, reason, step, clock.instant());
        if (!store.updateBuild(done, current.status())) {
            log.atWarn().addKeyValue("build_id", build.id()).log("a build's status changed under its builder");
        }
    }

    private void info(BuildRecord build, Optional<String> step, String message) {
        line(build, BuildLogLine.Level.INFO, step, message);
    }

    private void line(BuildRecord build, BuildLogLine.Level level, Optional<String> step, String message) {
        store.appendLog(build.id(), new BuildLogLine(clock.instant(), level, message, step));
    }

    private void evictLayers() {
        try {
            layers.evict();
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("cached build layers could not be evicted");
        }
    }

    private void killQuietly(SandboxId sandbox) {
        try {
            orchestrator.kill(sandbox);
        } catch (RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", sandbox.value())
                    .setCause(e)
                    .log("a build sandbox could not be killed; its TTL will");
        }
    }

    private void requireFree(String name) {
        if (orchestrator.findTemplate(name).isPresent()) {
            throw new AgentEnvException(
                    ErrorKind.CONFLICT, "template name " + name + " is a built-in template or a snapshot's name");
        }
    }

    private static void validateName(String name) {
        if (!NAME.matcher(name).matches()) {
            throw AgentEnvException.invalidArgument(
                    "template name must be 1-128 lowercase letters, digits, '_' or '-', starting with a letter or digit");
        }
    }

    private static void validateTag(String tag) {
        if (!TAG.matcher(tag).matches()) {
            throw AgentEnvException.invalidArgument("template tag must be 1-128 letters, digits, '_', '.' or '-'");
        }
    }

    /** 20 lowercase alphanumerics, like the other ids (E2B's template ids look so too). */
    private TemplateId newTemplateId() {
        return new TemplateId(SandboxId.random(random).value());
    }

    private static String quote(String text) {
        return "'" + text.replace("'", "'\\''") + "'";
    }

    /** Stops running builds' threads (their builds end in ERROR, or at the next start's recovery). */
    @Override
    public void close() {
        if (threads instanceof ExecutorService service) {
            service.shutdownNow();
        }
    }
}
