package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
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
 * Template builds (E2B's build API). A build gets a sandbox of its base ({@link BuildBases}: a template or snapshot,
 * {@code base} for E2B's default image, or a pulled image), runs its steps there through envd ({@link BuildSteps}: RUN
 * as the step's user, with the environment and working directory the ENV, WORKDIR and USER steps so far set; a step
 * whose inputs are unchanged is taken from the {@link StepCache}), then captures the sandbox into the catalog with the template's
 * id and names as aliases, so that sandboxes are created from it by either; the previous build's snapshot is then
 * deleted unless a tag names it ({@link TemplateRegistry}). Every stage and every line the steps print goes to the build's
 * log ({@link BuildLog}); a failure ends the build in ERROR with
 * the step that failed. The build sandbox is killed whatever happens.
 *
 * <p>Builds run one per virtual thread. A later build of the same template supersedes a running one, which ends in
 * ERROR at its next step. A restart fails the builds that were running ({@link #recover()}).
 */
public final class TemplateBuilder implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TemplateBuilder.class);
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,127}");
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    public static final String BASE_TEMPLATE = "base";
    /** The prefix of the templates images become ({@code img-<digest hex>}). */
    public static final String IMAGE_TEMPLATE_PREFIX = "img-";
    /** The metadata key that marks a build's sandbox, with the build id as its value. */
    public static final String BUILD_METADATA = "agentenv.build";

    private static final Duration BUILD_SANDBOX_TTL = Duration.ofHours(1);
    private static final int MAX_LOG_PAGE = 1000;

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
    private final TemplateBuildStore store;
    private final String defaultUser;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();
    private final Executor threads;
    private final BuildLog buildLog;
    private final BuildBases bases;
    private final BuildSteps steps;
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
        this.buildLog = new BuildLog(store, clock);
        this.bases = new BuildBases(orchestrator, images, defaultUser, buildLog);
        this.steps = new BuildSteps(guests, new CopyStep(guests, files), buildLog);
        this.layers = new StepCache(store, orchestrator, clock);
        this.threads = requireNonNull(threads, "threads is null");
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.store = requireNonNull(store, "store is null");
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
            buildLog.finish(
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

    private void run(TemplateRecord template, BuildRecord build, BuildSpec spec) {
        Optional<SandboxId> sandbox = Optional.empty();
        try {
            BuildBases.Base base = bases.resolve(build, spec);
            buildLog.info(
                    build,
                    Optional.of("base"),
                    "building template " + template.id().value() + " from " + base.describe());
            // the state the steps start from: the server's default user, or what the image's config says; the base's
            // own environment is envd's default already, the ENV steps' go with every command and into the template
            BuildState initial = new BuildState(defaultUser, Optional.empty(), new LinkedHashMap<>());
            base.image().ifPresent(initial::applyImageConfig);
            List<String> keys = stepKeys(bases.identity(base), spec.steps(), initial.copy());
            Optional<StepCache.Resume> resume = layers.resumePoint(spec.steps(), keys, spec.force());
            SandboxView created;
            try {
                created = createBuildSandbox(
                        build, resume.map(r -> r.snapshot().value()).orElse(base.template()));
            } catch (AgentEnvException e) {
                if (resume.isEmpty()) {
                    throw new BuildFailed(
                            Optional.of("base"), "the build sandbox could not be created: " + e.getMessage());
                }
                buildLog.info(
                        build,
                        Optional.of("base"),
                        "the cached layer did not start (" + e.getMessage() + "): rebuilding");
                layers.forget(resume.get());
                resume = Optional.empty();
                try {
                    created = createBuildSandbox(build, base.template());
                } catch (AgentEnvException again) {
                    throw new BuildFailed(
                            Optional.of("base"), "the build sandbox could not be created: " + again.getMessage());
                }
            }
            sandbox = Optional.of(created.id());
            BuildState state = initial.copy();
            int done = resume.map(StepCache.Resume::done).orElse(0);
            for (int i = 0; i < done; i++) {
                Step skipped = spec.steps().get(i);
                state.apply(skipped);
                buildLog.info(
                        build,
                        Optional.of(String.valueOf(i + 1)),
                        "cached: " + skipped.type() + " " + String.join(" ", skipped.args()));
            }
            for (int i = done; i < spec.steps().size(); i++) {
                requireCurrent(template, build);
                Step next = spec.steps().get(i);
                steps.step(build, created.id(), String.valueOf(i + 1), next, state);
                if (StepCache.layered(next)) {
                    layers.capture(created.id(), keys.get(i), state.env, state.defaults());
                }
            }
            if (spec.startCmd().isPresent() || spec.readyCmd().isPresent()) {
                requireCurrent(template, build);
                steps.startAndAwaitReady(build, created.id(), spec.startCmd(), spec.readyCmd(), state);
            }
            requireCurrent(template, build);
            buildLog.info(build, Optional.of("finalize"), "capturing the template");
            Optional<TemplateId> previous = orchestrator
                    .findTemplate(template.id().value())
                    .filter(t -> t.source() == TemplateView.Source.SNAPSHOT)
                    .map(TemplateView::id);
            List<String> aliases = new ArrayList<>();
            aliases.add(template.id().value());
            aliases.addAll(template.names());
            // the last USER and WORKDIR are where the template's sandboxes run commands that name neither
            SnapshotView captured = orchestrator.snapshotAsTemplate(created.id(), aliases, state.env, state.defaults());
            registry.built(build, captured.id(), previous);
            buildLog.info(
                    build, Optional.of("finalize"), "template " + template.id().value() + " is ready");
            buildLog.finish(build, BuildRecord.Status.READY, Optional.empty(), Optional.empty());
        } catch (BuildFailed e) {
            buildLog.line(build, BuildLogLine.Level.ERROR, e.step(), e.getMessage());
            buildLog.finish(build, BuildRecord.Status.ERROR, Optional.of(e.getMessage()), e.step());
        } catch (RuntimeException e) {
            log.atWarn()
                    .addKeyValue("template_id", template.id().value())
                    .addKeyValue("build_id", build.id())
                    .setCause(e)
                    .log("template build failed");
            String reason = "the build failed: " + e.getMessage();
            buildLog.line(build, BuildLogLine.Level.ERROR, Optional.empty(), reason);
            buildLog.finish(build, BuildRecord.Status.ERROR, Optional.of(reason), Optional.empty());
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
                true,
                Optional.empty(),
                List.of()));
    }

    /** Each step's cache key, the state advancing through the steps as the build would advance it. */
    private List<String> stepKeys(String baseIdentity, List<Step> steps, BuildState state) {
        List<String> keys = new ArrayList<>();
        String parent = StepCache.baseKey(baseIdentity, defaultUser);
        for (Step step : steps) {
            parent = StepCache.stepKey(parent, step, state.user, state.env, state.workdir);
            keys.add(parent);
            state.apply(step);
        }
        return keys;
    }

    private void requireCurrent(TemplateRecord template, BuildRecord build) throws BuildFailed {
        String current = running.get(template.id());
        if (current != null && !current.equals(build.id())) {
            throw new BuildFailed(Optional.empty(), "superseded by build " + current + " of the same template");
        }
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

    /** Stops running builds' threads (their builds end in ERROR, or at the next start's recovery). */
    @Override
    public void close() {
        if (threads instanceof ExecutorService service) {
            service.shutdownNow();
        }
    }
}
