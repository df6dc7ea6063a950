package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.TemplateId;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The orchestrator's port for templates requested through the build API, their builds and build logs; durable like
 * {@link SandboxStore} (a build survives a restart as a record, and {@link #unfinishedBuilds()} lets the recovery fail
 * the ones that were running).
 */
public interface TemplateBuildStore {
    /** Inserts a template; false (and nothing written) when one of its names belongs to another template. */
    boolean insertTemplate(TemplateRecord template);

    /** A template by id or name. */
    Optional<TemplateRecord> findTemplate(String idOrName);

    List<TemplateRecord> templates();

    /** Deletes a template with its names, builds, their logs and its tags; false when there was none. */
    boolean deleteTemplate(TemplateId id);

    void insertBuild(BuildRecord build);

    Optional<BuildRecord> build(String buildId);

    /** The template's builds, newest first. */
    List<BuildRecord> builds(TemplateId template);

    /** Replaces a build's status fields if it is still in {@code expected}; false otherwise. */
    boolean updateBuild(BuildRecord build, BuildRecord.Status expected);

    /** Appends a line to a build's log. */
    void appendLog(String buildId, BuildLogLine line);

    /** The build's log lines from index {@code offset} (0 = the first), at most {@code limit}. */
    List<BuildLogLine> logs(String buildId, int offset, int limit);

    /** Builds that were waiting or building (a restart found them so). */
    List<BuildRecord> unfinishedBuilds();

    /** Points a tag at a build of its template, moving it from the build it named before. */
    void assignTag(TagAssignment tag);

    /** Removes a template's tag; false when it had no tag of that name. */
    boolean removeTag(TemplateId template, String tag);

    /** A template's tags, ordered by tag. */
    List<TagAssignment> tags(TemplateId template);

    /** A build step's cached layer: the snapshot its sandbox was captured as after the step, by the step's cache key. */
    record Layer(String key, TemplateId snapshot) {
        public Layer {
            requireNonNull(key, "key is null");
            requireNonNull(snapshot, "snapshot is null");
        }
    }

    /** The layer cached under {@code key}, marked as used at {@code now}; empty when there is none. */
    Optional<TemplateId> useLayer(String key, Instant now);

    /** Caches a layer (replacing one of the same key). */
    void putLayer(Layer layer, Instant now);

    /** Forgets a cached layer; false when there was none. */
    boolean removeLayer(String key);

    /** The cached layers beyond the {@code keep} most recently used, least recently used first. */
    List<Layer> layersBeyond(int keep);
}
