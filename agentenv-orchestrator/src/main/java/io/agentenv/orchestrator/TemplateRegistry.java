package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.TemplateId;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The templates of the build API as objects: listed with their builds and tags, tagged, deleted.
 *
 * <p>A template's id and names create sandboxes from its latest ready build (the catalog snapshot that holds them as
 * aliases); the tag {@value #DEFAULT_TAG} always names that build. Other tags each name one ready build of the template
 * ({@code name:tag}); a build requested with tags gets them when it is ready, and assigning a tag again moves it. A
 * build's snapshot is kept while it is the latest or a tag names it, and deleted otherwise. Deleting a template deletes
 * its names (free for another template then), builds, logs, tags and snapshots; it is refused while a build of it runs
 * or a sandbox created from it is running or paused.
 */
public final class TemplateRegistry {
    private static final Logger log = LoggerFactory.getLogger(TemplateRegistry.class);

    /** The tag that names a template's latest ready build; it cannot be assigned or removed. */
    public static final String DEFAULT_TAG = "default";

    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    private static final int SANDBOX_PAGE = 1000;

    /** A template with its builds (newest first) and its tags ({@value #DEFAULT_TAG} first, while it names a build). */
    public record Built(TemplateRecord template, List<BuildRecord> builds, List<TagAssignment> tags) {
        public Built {
            requireNonNull(template, "template is null");
            builds = List.copyOf(builds);
            tags = List.copyOf(tags);
        }

        public Optional<BuildRecord> latest() {
            return builds.stream().findFirst();
        }

        public Optional<BuildRecord> latestReady() {
            return builds.stream()
                    .filter(b -> b.status() == BuildRecord.Status.READY)
                    .findFirst();
        }

        /** The template's own change time, or its latest build's when that is later. */
        public Instant updatedAt() {
            Instant own = template.updatedAt();
            return latest().map(BuildRecord::updatedAt).filter(own::isBefore).orElse(own);
        }
    }

    /** The build that tags were assigned to, and the tags. */
    public record Assigned(String buildId, List<String> tags) {
        public Assigned {
            requireNonNull(buildId, "buildId is null");
            tags = List.copyOf(tags);
        }
    }

    private final Orchestrator orchestrator;
    private final TemplateBuildStore store;
    private final TemplateFiles files;
    private final Clock clock;
    /** Tag changes and the snapshot clean-up they lead to happen one at a time. */
    private final Object lock = new Object();

    TemplateRegistry(Orchestrator orchestrator, TemplateBuildStore store, TemplateFiles files, Clock clock) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.store = requireNonNull(store, "store is null");
        this.files = requireNonNull(files, "files is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /** Every template of the build API, newest first. */
    public List<Built> templates() {
        return store.templates().stream()
                .map(this::built)
                .sorted(Comparator.comparing((Built b) -> b.template().createdAt())
                        .thenComparing(b -> b.template().id().value())
                        .reversed())
                .toList();
    }

    /** A template by id or name; a {@code :tag} after it is not looked at. */
    public Optional<Built> find(String reference) {
        requireNonNull(reference, "reference is null");
        return store.findTemplate(bare(reference)).map(this::built);
    }

    /**
     * A template by id or name, or by {@code name:tag} when that tag names a build of it (E2B's alias check). Empty
     * when there is no such template; NOT_FOUND when the tag names none of its builds.
     */
    public Optional<Built> findTagged(String reference) {
        Optional<Built> found = find(reference);
        Optional<String> tag = tagOf(reference);
        if (found.isPresent()
                && tag.isPresent()
                && buildNamed(found.get(), tag.get()).isEmpty()) {
            throw new AgentEnvException(
                    ErrorKind.NOT_FOUND,
                    "tag '" + tag.get() + "' does not exist for template '" + bare(reference) + "'");
        }
        return found;
    }

    /** A template's tags; NOT_FOUND when there is no such template. */
    public List<TagAssignment> tags(String reference) {
        return require(reference).tags();
    }

    /**
     * Points {@code tags} at the build {@code target} names ({@code name}, {@code name:tag} or {@code name:buildId};
     * a plain name is its latest ready build), moving them from the builds they named. INVALID_ARGUMENT (no tags, a bad
     * tag, {@value #DEFAULT_TAG}), NOT_FOUND (no such template or tag), CONFLICT (the build's snapshot is gone).
     */
    public Assigned assign(String target, List<String> tags) {
        requireNonNull(target, "target is null");
        List<String> wanted = validTags(tags, "assigned");
        synchronized (lock) {
            Built built = require(target);
            String tag = tagOf(target).orElse(DEFAULT_TAG);
            BuildRecord build = buildNamed(built, tag)
                    .orElseThrow(() -> new AgentEnvException(
                            ErrorKind.NOT_FOUND, "template '" + target + "' with tag '" + tag + "' not found"));
            if (!snapshotExists(built, build)) {
                throw new AgentEnvException(
                        ErrorKind.CONFLICT,
                        "build " + build.id() + " of template " + bare(target)
                                + " cannot be tagged: its snapshot was deleted when a later build replaced it");
            }
            Instant now = clock.instant();
            for (String name : wanted) {
                store.assignTag(new TagAssignment(built.template().id(), name, build.id(), now));
            }
            release(built.template().id(), Optional.empty());
            return new Assigned(build.id(), wanted);
        }
    }

    /**
     * Removes tags from the template {@code name} (no {@code :tag}); the snapshot of a build no tag names any more is
     * deleted unless it is the latest. INVALID_ARGUMENT (no tags, {@value #DEFAULT_TAG}, a tag in the name), NOT_FOUND
     * (no such template, or it has none of a tag).
     */
    public void remove(String name, List<String> tags) {
        requireNonNull(name, "name is null");
        if (tagOf(name).isPresent()) {
            throw AgentEnvException.invalidArgument(
                    "the template name must not contain a tag; list the tags to remove in 'tags'");
        }
        List<String> unwanted = validTags(tags, "removed");
        synchronized (lock) {
            Built built = require(name);
            List<String> missing = unwanted.stream()
                    .filter(t -> built.tags().stream().noneMatch(a -> a.tag().equals(t)))
                    .toList();
            if (!missing.isEmpty()) {
                throw new AgentEnvException(
                        ErrorKind.NOT_FOUND, "template " + name + " has no tag " + String.join(", ", missing));
            }
            unwanted.forEach(t -> store.removeTag(built.template().id(), t));
            release(built.template().id(), Optional.empty());
        }
    }

    /**
     * Deletes a template by id or name with its names, builds, logs, tags, snapshots and uploaded files. False when there is no such
     * template; CONFLICT (with the reason) while a build of it runs or a sandbox created from it is running or paused.
     */
    public boolean delete(String reference) {
        requireNonNull(reference, "reference is null");
        synchronized (lock) {
            Optional<Built> found = find(reference);
            if (found.isEmpty()) {
                return false;
            }
            Built built = found.get();
            String id = built.template().id().value();
            Optional<BuildRecord> running = built.builds().stream()
                    .filter(b -> b.status() == BuildRecord.Status.BUILDING)
                    .findFirst();
            if (running.isPresent()) {
                throw new AgentEnvException(
                        ErrorKind.CONFLICT,
                        "template " + id + " cannot be deleted while its build "
                                + running.get().id() + " runs");
            }
            Set<TemplateId> snapshots = snapshots(built);
            Set<String> names = new LinkedHashSet<>(built.template().names());
            names.add(id);
            List<SandboxView> users = users(snapshots, names);
            if (!users.isEmpty()) {
                SandboxView first = users.getFirst();
                throw new AgentEnvException(
                        ErrorKind.CONFLICT,
                        "template " + id + " cannot be deleted: " + users.size() + " sandbox"
                                + (users.size() == 1 ? " was" : "es were") + " created from it ("
                                + first.id().value()
                                + " is " + first.state().name().toLowerCase(java.util.Locale.ROOT)
                                + "); kill them first");
            }
            for (TemplateId snapshot : snapshots) {
                deleteSnapshot(snapshot);
            }
            boolean deleted = store.deleteTemplate(built.template().id());
            try {
                files.deleteAll(built.template().id());
            } catch (RuntimeException e) {
                log.atWarn()
                        .addKeyValue("template_id", id)
                        .setCause(e)
                        .log("a deleted template's uploaded files could not all be removed");
            }
            log.atInfo().addKeyValue("template_id", id).log("template deleted");
            return deleted;
        }
    }

    /**
     * The snapshot {@code name:tag} creates sandboxes from, for a create. INVALID_ARGUMENT, as for any template a
     * create does not find, when the template, the tag or the tagged build's snapshot does not exist.
     */
    TemplateId snapshotOfTag(String reference) {
        String tag = tagOf(reference).orElse(DEFAULT_TAG);
        Built built = find(reference)
                .orElseThrow(() -> AgentEnvException.invalidArgument("template " + bare(reference) + " not found"));
        if (tag.equals(DEFAULT_TAG)) {
            return current(built.template().id())
                    .orElseThrow(() -> AgentEnvException.invalidArgument(
                            "template " + bare(reference) + " has no ready build yet"));
        }
        BuildRecord build = buildNamed(built, tag)
                .orElseThrow(() -> AgentEnvException.invalidArgument(
                        "template " + bare(reference) + " has no tag or build " + tag));
        if (build.status() != BuildRecord.Status.READY) {
            throw AgentEnvException.invalidArgument("build " + tag + " of template " + bare(reference) + " is "
                    + build.status().name().toLowerCase(java.util.Locale.ROOT) + ", not ready");
        }
        return build.snapshot()
                .filter(s -> snapshotExists(built, build))
                .orElseThrow(() -> AgentEnvException.invalidArgument("template " + reference + " names build "
                        + build.id() + ", whose snapshot no longer exists (a later build replaced it while no tag "
                        + "named it); build the template again"));
    }

    /**
     * A build of {@code build}'s template was captured as {@code captured}, which now holds the template's id and
     * names: records it on the build, points the build's tags at it, and deletes the snapshots no tag keeps (among them
     * {@code previous}, the snapshot that held the names before).
     */
    void built(BuildRecord build, TemplateId captured, Optional<TemplateId> previous) {
        synchronized (lock) {
            Instant now = clock.instant();
            BuildRecord current = store.build(build.id()).orElse(build);
            if (!store.updateBuild(current.withSnapshot(captured, now), current.status())) {
                log.atWarn().addKeyValue("build_id", build.id()).log("a build's snapshot could not be recorded");
            }
            for (String tag : build.tags()) {
                if (!tag.equals(DEFAULT_TAG)) {
                    store.assignTag(new TagAssignment(build.template(), tag, build.id(), now));
                }
            }
            release(build.template(), previous.filter(p -> !p.equals(captured)));
        }
    }

    // ---- internals ---------------------------------------------------------------------------------------------

    private Built built(TemplateRecord template) {
        List<BuildRecord> builds = store.builds(template.id());
        List<TagAssignment> tags = new ArrayList<>();
        builds.stream()
                .filter(b -> b.status() == BuildRecord.Status.READY)
                .findFirst()
                .ifPresent(b -> tags.add(new TagAssignment(template.id(), DEFAULT_TAG, b.id(), b.updatedAt())));
        tags.addAll(store.tags(template.id()));
        return new Built(template, builds, tags);
    }

    private Built require(String reference) {
        return find(reference)
                .orElseThrow(() ->
                        new AgentEnvException(ErrorKind.NOT_FOUND, "template '" + bare(reference) + "' not found"));
    }

    /** The build a tag names: {@value #DEFAULT_TAG} the latest ready one; a build id that build; else the tag's. */
    private static Optional<BuildRecord> buildNamed(Built built, String tag) {
        if (tag.equals(DEFAULT_TAG)) {
            return built.latestReady();
        }
        Optional<BuildRecord> byId =
                built.builds().stream().filter(b -> b.id().equals(tag)).findFirst();
        if (byId.isPresent()) {
            return byId;
        }
        return built.tags().stream()
                .filter(t -> t.tag().equals(tag))
                .findFirst()
                .flatMap(t -> built.builds().stream()
                        .filter(b -> b.id().equals(t.buildId()))
                        .findFirst());
    }

    private boolean snapshotExists(Built built, BuildRecord build) {
        if (build.snapshot().isEmpty()) { // built before builds recorded their snapshot: only the latest has one
            return built.latestReady().filter(b -> b.id().equals(build.id())).isPresent()
                    && current(built.template().id()).isPresent();
        }
        return exists(build.snapshot().get());
    }

    /** The snapshot that holds the template's id as an alias: its latest ready build's. */
    private Optional<TemplateId> current(TemplateId template) {
        return orchestrator
                .findTemplate(template.value())
                .filter(t -> t.source() == TemplateView.Source.SNAPSHOT)
                .map(TemplateView::id);
    }

    private boolean exists(TemplateId snapshot) {
        return orchestrator
                .findTemplate(snapshot.value())
                .filter(t -> t.source() == TemplateView.Source.SNAPSHOT && t.id().equals(snapshot))
                .isPresent();
    }

    /** The snapshots the template's builds became, and the one that holds its names. */
    private Set<TemplateId> snapshots(Built built) {
        Set<TemplateId> snapshots = new LinkedHashSet<>();
        current(built.template().id()).ifPresent(snapshots::add);
        built.builds().forEach(b -> b.snapshot().ifPresent(snapshots::add));
        return snapshots;
    }

    /** Deletes the template's snapshots that neither hold its names nor are named by a tag. */
    private void release(TemplateId template, Optional<TemplateId> also) {
        Optional<TemplateRecord> record = store.findTemplate(template.value());
        if (record.isEmpty()) {
            return;
        }
        Built built = built(record.get());
        Set<TemplateId> keep = new LinkedHashSet<>();
        current(template).ifPresent(keep::add);
        for (TagAssignment tag : store.tags(template)) {
            built.builds().stream()
                    .filter(b -> b.id().equals(tag.buildId()))
                    .forEach(b -> b.snapshot().ifPresent(keep::add));
        }
        Set<TemplateId> candidates = snapshots(built);
        also.ifPresent(candidates::add);
        for (TemplateId snapshot : candidates) {
            if (!keep.contains(snapshot) && exists(snapshot)) {
                deleteSnapshot(snapshot);
            }
        }
    }

    private void deleteSnapshot(TemplateId snapshot) {
        try {
            orchestrator.deleteTemplate(snapshot.value());
        } catch (AgentEnvException e) {
            log.atWarn()
                    .addKeyValue("snapshot_id", snapshot.value())
                    .setCause(e)
                    .log("a template build's snapshot could not be deleted");
        }
    }

    /** Running or paused sandboxes created from one of the snapshots or by one of the names (with or without a tag). */
    private List<SandboxView> users(Set<TemplateId> snapshots, Set<String> names) {
        List<SandboxView> users = new ArrayList<>();
        Optional<Cursor> after = Optional.empty();
        do {
            Page<SandboxView> page = orchestrator.list(new SandboxQuery(
                    SandboxState.visible(),
                    java.util.Map.of(),
                    Optional.empty(),
                    Optional.empty(),
                    SortOrder.DESC,
                    SANDBOX_PAGE,
                    after));
            for (SandboxView sandbox : page.items()) {
                boolean byName = sandbox.alias()
                        .map(TemplateRegistry::bare)
                        .filter(names::contains)
                        .isPresent();
                if (snapshots.contains(sandbox.template()) || byName) {
                    users.add(sandbox);
                }
            }
            after = page.next();
        } while (after.isPresent());
        return users;
    }

    private static List<String> validTags(List<String> tags, String verb) {
        requireNonNull(tags, "tags is null");
        if (tags.isEmpty()) {
            throw AgentEnvException.invalidArgument("at least one tag is required");
        }
        Set<String> unique = new LinkedHashSet<>();
        for (String tag : tags) {
            if (tag == null || !TAG.matcher(tag).matches()) {
                throw AgentEnvException.invalidArgument("template tag must be 1-128 letters, digits, '_', '.' or '-'");
            }
            if (tag.equals(DEFAULT_TAG)) {
                throw AgentEnvException.invalidArgument("the '" + DEFAULT_TAG + "' tag cannot be " + verb
                        + ": it always names the template's latest ready build");
            }
            unique.add(tag);
        }
        return List.copyOf(unique);
    }

    /** {@code name:tag} without the tag. */
    static String bare(String reference) {
        int colon = reference.indexOf(':');
        return colon >= 0 ? reference.substring(0, colon) : reference;
    }

    private static Optional<String> tagOf(String reference) {
        int colon = reference.indexOf(':');
        return colon >= 0 ? Optional.of(reference.substring(colon + 1)) : Optional.empty();
    }
}
