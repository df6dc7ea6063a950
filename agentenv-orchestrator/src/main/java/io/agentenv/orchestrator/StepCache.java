package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Template build steps' layers, cached by their inputs: after a RUN or COPY step the build sandbox is captured as a
 * snapshot the catalog does not list, under a key that covers the parent layer's key, the step's type, arguments and
 * file hash, and the user, environment and working directory it ran with. A later build whose steps up to that point
 * have the same keys starts from the newest such layer instead of its base and skips those steps; a step marked
 * {@code force} (and the build's {@code force}) rebuilds from there on. At most {@link #KEEP} layers are kept, the
 * least recently used are deleted first.
 */
final class StepCache {
    private static final Logger log = LoggerFactory.getLogger(StepCache.class);
    /** Layers kept at most (each is a snapshot with the build sandbox's memory). */
    static final int KEEP = 64;
    /** Bumped when what a build does around the steps changes (the preparation of an image, say): old keys die. */
    private static final String VERSION = "layers-1";

    private final TemplateBuildStore store;
    private final Orchestrator orchestrator;
    private final Clock clock;

    StepCache(TemplateBuildStore store, Orchestrator orchestrator, Clock clock) {
        this.store = requireNonNull(store, "store is null");
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /** The key of a build's base: what it starts from, as exactly as it is known (an image digest, a snapshot id). */
    static String baseKey(String identity, String defaultUser) {
        return sha256(String.join("\n", VERSION, identity, defaultUser));
    }

    /** The key of a step run after the layer {@code parent} with this user, environment and working directory. */
    static String stepKey(
            String parent, TemplateBuilder.Step step, String user, Map<String, String> env, Optional<String> workdir) {
        StringBuilder text = new StringBuilder(parent)
                .append('\n')
                .append(step.type())
                .append('\n')
                .append(step.args().size());
        for (String arg : step.args()) {
            text.append('\n').append(arg.length()).append(':').append(arg);
        }
        text.append('\n').append(step.filesHash().orElse("-"));
        text.append('\n').append(user);
        text.append('\n').append(workdir.orElse("-"));
        for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
            text.append('\n')
                    .append(e.getKey().length())
                    .append(':')
                    .append(e.getKey())
                    .append('=')
                    .append(e.getValue());
        }
        return sha256(text.toString());
    }

    /** Whether a step of this type changes the filesystem, so that its result is worth a layer. */
    static boolean layered(TemplateBuilder.Step step) {
        return step.type().equals("RUN") || step.type().equals("COPY");
    }

    /**
     * The newest cached layer to start from: the highest index {@code i} (steps {@code 0..i-1} done by it) whose step
     * {@code i-1} is layered and cached, with no forced step before it; empty when there is none or {@code force}.
     */
    Optional<Resume> resumePoint(List<TemplateBuilder.Step> steps, List<String> keys, boolean force) {
        if (force) {
            return Optional.empty();
        }
        int firstForced = steps.size();
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).force()) {
                firstForced = i;
                break;
            }
        }
        for (int i = firstForced; i > 0; i--) {
            if (!layered(steps.get(i - 1))) {
                continue;
            }
            String key = keys.get(i - 1);
            Optional<TemplateId> snapshot = store.useLayer(key, clock.instant());
            if (snapshot.isEmpty()) {
                continue;
            }
            if (orchestrator.findTemplate(snapshot.get().value()).isEmpty()) {
                store.removeLayer(key); // deleted from outside: the entry is stale
                continue;
            }
            return Optional.of(new Resume(i, key, snapshot.get()));
        }
        return Optional.empty();
    }

    /** Where a build resumes: after {@code done} steps, from the layer {@code snapshot} cached as {@code key}. */
    record Resume(int done, String key, TemplateId snapshot) {}

    /** Captures the build sandbox after a layered step as the layer {@code key}. */
    void capture(SandboxId sandbox, String key, Map<String, String> env, GuestDefaults defaults) {
        SnapshotView layer = orchestrator.snapshotAsTemplate(sandbox, List.of(), env, defaults);
        store.putLayer(new TemplateBuildStore.Layer(key, layer.id()), clock.instant());
    }

    /** Forgets a layer that could not be used (its snapshot would not start). */
    void forget(Resume resume) {
        store.removeLayer(resume.key());
        deleteQuietly(resume.snapshot());
    }

    /** Deletes the least recently used layers beyond {@link #KEEP}. */
    void evict() {
        for (TemplateBuildStore.Layer layer : store.layersBeyond(KEEP)) {
            if (store.removeLayer(layer.key())) {
                deleteQuietly(layer.snapshot());
            }
        }
    }

    private void deleteQuietly(TemplateId snapshot) {
        try {
            orchestrator.deleteTemplate(snapshot.value());
        } catch (RuntimeException e) {
            log.atWarn()
                    .addKeyValue("snapshot_id", snapshot.value())
                    .setCause(e)
                    .log("a cached build layer's snapshot could not be deleted");
        }
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
