package io.agentenv.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.cluster.NodeId;
import io.agentenv.orchestrator.BuildLogLine;
import io.agentenv.orchestrator.BuildRecord;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.TemplateBuildStore;
import io.agentenv.orchestrator.TemplateBuildStoreContract;
import io.agentenv.orchestrator.TemplateRecord;
import io.agentenv.spi.Resources;
import io.agentenv.spi.TemplateId;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The template build store contract on PostgreSQL, and what a cluster adds: builds are the node's that runs them, and
 * one build's log lines written from several connections at once keep one gap-free order.
 */
class PostgresTemplateBuildStoreTest extends TemplateBuildStoreContract {
    private static final NodeId NODE = new NodeId("node-a");
    private static final NodeId OTHER = new NodeId("node-b");
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00.123456789Z");

    private final ClusterPerDirectory clusters = new ClusterPerDirectory();

    @Override
    protected SandboxStore open(Path dir) {
        return clusters.start(dir, NODE);
    }

    @Override
    protected TemplateBuildStore templateBuilds(SandboxStore sandboxes) {
        return ((PostgresSandboxStore) sandboxes).templateBuilds();
    }

    @AfterEach
    void dropDatabase() {
        clusters.close();
    }

    private static BuildRecord build(String id, BuildRecord.Status status, Instant at) {
        return new BuildRecord(
                id, new TemplateId("tpl1"), status, Optional.empty(), Optional.empty(), List.of("v1"), at, at);
    }

    @Test
    void unfinished_builds_are_those_of_the_node_that_runs_them() {
        TestCluster cluster = clusters.of(dir);
        TemplateBuildStore other = cluster.start(OTHER).templateBuilds();
        store.insertTemplate(
                new TemplateRecord(new TemplateId("tpl1"), List.of("web"), new Resources(2, 512, 1024), T0, T0));
        store.insertBuild(build("mine", BuildRecord.Status.BUILDING, T0));
        other.insertBuild(build("theirs", BuildRecord.Status.WAITING, T0.plusSeconds(1)));

        assertThat(store.unfinishedBuilds()).extracting(BuildRecord::id).containsExactly("mine");
        assertThat(other.unfinishedBuilds()).extracting(BuildRecord::id).containsExactly("theirs");
        assertThat(store.builds(new TemplateId("tpl1")))
                .as("the catalog is the cluster's")
                .extracting(BuildRecord::id)
                .containsExactly("theirs", "mine");
    }

    @Test
    void log_lines_appended_at_once_from_several_threads_are_all_kept_in_one_order() throws Exception {
        store.insertTemplate(
                new TemplateRecord(new TemplateId("tpl1"), List.of("web"), new Resources(2, 512, 1024), T0, T0));
        store.insertBuild(build("b1", BuildRecord.Status.BUILDING, T0));
        int writers = 4;
        int lines = 25;
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(writers)) {
            for (int w = 0; w < writers; w++) {
                String writer = "w" + w;
                done.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < lines; i++) {
                        store.appendLog(
                                "b1",
                                new BuildLogLine(T0, BuildLogLine.Level.INFO, writer + " " + i, Optional.empty()));
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> future : done) {
                future.get(60, TimeUnit.SECONDS);
            }
        }

        List<BuildLogLine> log = store.logs("b1", 0, 1000);
        assertThat(log).hasSize(writers * lines);
        for (int w = 0; w < writers; w++) {
            String writer = "w" + w + " ";
            assertThat(log.stream()
                            .map(BuildLogLine::message)
                            .filter(m -> m.startsWith(writer))
                            .toList())
                    .as("each writer's lines in the order it wrote them")
                    .containsExactlyElementsOf(
                            IntStream.range(0, lines).mapToObj(i -> writer + i).toList());
        }
        assertThat(store.logs("b1", writers * lines - 1, 10)).hasSize(1);
    }
}
