package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateDescriptor;
import io.agentenv.spi.TemplateId;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.LoggerFactory;

/**
 * Resolves what a create names: a backend's built-in template, else a snapshot by id or alias, else (a reference with
 * a colon, {@code name:tag}) the snapshot the template build API's tag names.
 */
final class TemplateCatalog {
    /**
     * What a sandbox is launched from, with the name the client used, the environment and the custom extension params
     * (raw JSON object, {@code "{}"} for a built-in template) it inherits.
     */
    record Resolved(
            TemplateId template,
            Optional<String> alias,
            LaunchSource source,
            Map<String, String> envVars,
            Resources resources,
            String customExtensionParams,
            GuestDefaults guestDefaults,
            List<VolumeAttachment> volumes) {}

    private final SandboxBackendFactory backends;
    private final SandboxStore store;
    private final Artifacts artifacts;
    /** {@code name:tag} to the snapshot id the tag names (INVALID_ARGUMENT when there is none); set by the builder. */
    private volatile Function<String, TemplateId> tags = reference -> {
        throw AgentEnvException.invalidArgument("template " + printable(reference) + " not found");
    };

    TemplateCatalog(SandboxBackendFactory backends, SandboxStore store, Artifacts artifacts) {
        this.backends = requireNonNull(backends, "backends is null");
        this.store = requireNonNull(store, "store is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
    }

    /** Tells the backend that a snapshot is gone (it may keep restores of it ready); a failure is only logged. */
    void snapshotDeleted(TemplateId id) {
        try {
            backends.snapshotDeleted(id);
        } catch (RuntimeException e) {
            LoggerFactory.getLogger(TemplateCatalog.class)
                    .atWarn()
                    .addKeyValue("snapshot_id", id.value())
                    .setCause(e)
                    .log("the backend did not take the deletion of a snapshot");
        }
    }

    /** The backend's built-in template of that name, looked up by id (a create does not list every template). */
    Optional<TemplateDescriptor> builtIn(String name) {
        return TemplateId.isValid(name) ? backends.template(new TemplateId(name)) : Optional.empty();
    }

    void resolveTagsWith(Function<String, TemplateId> resolver) {
        this.tags = requireNonNull(resolver, "resolver is null");
    }

    Resolved resolve(String reference) {
        Optional<TemplateDescriptor> builtIn = builtIn(reference);
        if (builtIn.isPresent()) {
            TemplateDescriptor template = builtIn.get();
            return new Resolved(
                    template.id(),
                    Optional.of(reference),
                    new LaunchSource.Template(template.id()),
                    Map.of(),
                    template.resources(),
                    CustomExtensionParams.EMPTY,
                    GuestDefaults.NONE,
                    List.of());
        }
        Optional<SnapshotRecord> tagged = reference.indexOf(':') > 0
                ? store.findSnapshot(tags.apply(reference).value())
                : Optional.empty();
        SnapshotRecord snapshot = tagged.or(() -> store.findSnapshot(reference))
                .orElseThrow(
                        () -> AgentEnvException.invalidArgument("template " + printable(reference) + " not found"));
        SnapshotState state;
        try {
            // a snapshot taken on another node is fetched from the shared storage first
            state = backends.decodeSnapshotState(
                    snapshot.state().encoded(), artifacts.local(snapshot.state().artifactDir()));
        } catch (BackendException e) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "snapshot " + snapshot.id() + " cannot be restored", e);
        }
        Optional<String> alias = reference.equals(snapshot.id().value()) ? Optional.empty() : Optional.of(reference);
        return new Resolved(
                snapshot.id(),
                alias,
                new LaunchSource.Snapshot(state),
                snapshot.envVars(),
                state.resources(),
                snapshot.customExtensionParams(),
                snapshot.guestDefaults(),
                snapshot.volumes());
    }

    /** A built-in template or a snapshot, by id or alias (a built-in name wins, as in {@link #resolve}). */
    Optional<TemplateView> find(String idOrAlias) {
        Optional<TemplateDescriptor> builtIn = builtIn(idOrAlias);
        if (builtIn.isPresent()) {
            return builtIn.map(TemplateCatalog::view);
        }
        return store.findSnapshot(idOrAlias)
                .map(s -> new TemplateView(
                        s.id(),
                        TemplateView.Source.SNAPSHOT,
                        s.aliases(),
                        s.resources(),
                        Optional.of(s.createdAt()),
                        Optional.of(s.updatedAt())));
    }

    /**
     * The backend's built-in templates newest first by (build time, id), keyset-paginated like the other lists; a
     * template of unknown build time sorts as built at the epoch.
     */
    Page<TemplateView> listBuiltIn(int limit, Optional<Cursor> after) {
        Comparator<TemplateView> newestFirst = Comparator.comparing(TemplateCatalog::sortTime)
                .thenComparing(t -> t.id().value())
                .reversed();
        List<TemplateView> remaining = backends.templates().stream()
                .map(TemplateCatalog::view)
                .filter(t -> after.isEmpty() || isAfter(t, after.get()))
                .sorted(newestFirst)
                .toList();
        if (remaining.size() <= limit) {
            return new Page<>(remaining, Optional.empty());
        }
        List<TemplateView> page = remaining.subList(0, limit);
        TemplateView last = page.getLast();
        return new Page<>(page, Optional.of(new Cursor(sortTime(last), last.id().value())));
    }

    private static boolean isAfter(TemplateView template, Cursor cursor) { // in newest-first order
        int byTime = sortTime(template).compareTo(cursor.at());
        return byTime < 0 || (byTime == 0 && template.id().value().compareTo(cursor.id()) < 0);
    }

    private static Instant sortTime(TemplateView template) {
        return template.createdAt().orElse(Instant.EPOCH);
    }

    private static TemplateView view(TemplateDescriptor template) {
        return new TemplateView(
                template.id(),
                TemplateView.Source.BUILT_IN,
                List.of(template.id().value()),
                template.resources(),
                template.builtAt(),
                template.builtAt());
    }

    static Map<String, String> merged(Map<String, String> base, Map<String, String> overrides) {
        Map<String, String> env = new HashMap<>(base);
        env.putAll(overrides);
        return env;
    }

    /** At most 128 characters of {@code text}, control characters as {@code ?}: safe to put in an error message. */
    static String printable(String text) {
        String shortened = text.length() > 128 ? text.substring(0, 128) + "..." : text;
        return shortened.replaceAll("\\p{Cntrl}", "?");
    }
}
