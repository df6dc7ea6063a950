package io.agentenv.orchestrator;

import io.agentenv.spi.TemplateId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** {@link TemplateBuildStore} in memory, for the builder's tests (the SQLite one has its own tests). */
final class MemoryTemplateBuildStore implements TemplateBuildStore {
    private final Map<TemplateId, TemplateRecord> templates = new LinkedHashMap<>();
    private final Map<String, BuildRecord> builds = new LinkedHashMap<>();
    private final Map<String, List<BuildLogLine>> logs = new LinkedHashMap<>();
    private final Map<TemplateId, Map<String, TagAssignment>> tags = new LinkedHashMap<>();
    private final Map<String, TemplateId> layers = new LinkedHashMap<>();
    private final Map<String, Instant> layerUse = new LinkedHashMap<>();

    @Override
    public synchronized boolean insertTemplate(TemplateRecord template) {
        for (TemplateRecord other : templates.values()) {
            if (!other.id().equals(template.id()) && other.names().stream().anyMatch(template.names()::contains)) {
                return false;
            }
        }
        templates.put(template.id(), template);
        return true;
    }

    @Override
    public synchronized Optional<TemplateRecord> findTemplate(String idOrName) {
        return templates.values().stream()
                .filter(t -> t.id().value().equals(idOrName) || t.names().contains(idOrName))
                .findFirst();
    }

    @Override
    public synchronized List<TemplateRecord> templates() {
        return List.copyOf(templates.values());
    }

    @Override
    public synchronized boolean deleteTemplate(TemplateId id) {
        builds.values().removeIf(b -> b.template().equals(id));
        tags.remove(id);
        return templates.remove(id) != null;
    }

    @Override
    public synchronized void insertBuild(BuildRecord build) {
        builds.put(build.id(), build);
        logs.put(build.id(), new ArrayList<>());
    }

    @Override
    public synchronized Optional<BuildRecord> build(String buildId) {
        return Optional.ofNullable(builds.get(buildId));
    }

    @Override
    public synchronized List<BuildRecord> builds(TemplateId template) {
        return builds.values().stream()
                .filter(b -> b.template().equals(template))
                .sorted(Comparator.comparing(BuildRecord::createdAt).reversed())
                .toList();
    }

    @Override
    public synchronized boolean updateBuild(BuildRecord build, BuildRecord.Status expected) {
        BuildRecord current = builds.get(build.id());
        if (current == null || current.status() != expected) {
            return false;
        }
        builds.put(build.id(), build);
        return true;
    }

    @Override
    public synchronized void appendLog(String buildId, BuildLogLine line) {
        logs.computeIfAbsent(buildId, k -> new ArrayList<>()).add(line);
    }

    @Override
    public synchronized List<BuildLogLine> logs(String buildId, int offset, int limit) {
        List<BuildLogLine> all = logs.getOrDefault(buildId, List.of());
        return List.copyOf(all.subList(Math.min(offset, all.size()), Math.min(offset + limit, all.size())));
    }

    @Override
    public synchronized List<BuildRecord> unfinishedBuilds() {
        return builds.values().stream().filter(b -> !b.status().finished()).toList();
    }

    @Override
    public synchronized void assignTag(TagAssignment tag) {
        tags.computeIfAbsent(tag.template(), k -> new TreeMap<>()).put(tag.tag(), tag);
    }

    @Override
    public synchronized boolean removeTag(TemplateId template, String tag) {
        Map<String, TagAssignment> of = tags.get(template);
        return of != null && of.remove(tag) != null;
    }

    @Override
    public synchronized List<TagAssignment> tags(TemplateId template) {
        return List.copyOf(tags.getOrDefault(template, Map.of()).values());
    }

    @Override
    public synchronized Optional<TemplateId> useLayer(String key, Instant now) {
        if (!layers.containsKey(key)) {
            return Optional.empty();
        }
        layerUse.put(key, now);
        return Optional.of(layers.get(key));
    }

    @Override
    public synchronized void putLayer(Layer layer, Instant now) {
        layers.put(layer.key(), layer.snapshot());
        layerUse.put(layer.key(), now);
    }

    @Override
    public synchronized boolean removeLayer(String key) {
        layerUse.remove(key);
        return layers.remove(key) != null;
    }

    @Override
    public synchronized List<Layer> layersBeyond(int keep) {
        List<String> byUse = layers.keySet().stream()
                .sorted(java.util.Comparator.comparing((String k) -> layerUse.get(k))
                        .reversed())
                .toList();
        return byUse.subList(Math.min(keep, byUse.size()), byUse.size()).stream()
                .map(k -> new Layer(k, layers.get(k)))
                .toList()
                .reversed();
    }

    /** The cached layers' keys. */
    synchronized java.util.Set<String> layerKeys() {
        return java.util.Set.copyOf(layers.keySet());
    }
}
