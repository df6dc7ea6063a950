package io.agentenv.store.postgres;

import io.agentenv.cluster.NodeId;
import java.nio.file.Path;

/**
 * The contracts' notion of "the same data": one {@link TestCluster} per test directory, so a contract's reopen of its
 * directory finds the database it wrote, and the next test a fresh one.
 */
final class ClusterPerDirectory implements AutoCloseable {
    private Path dir;
    private TestCluster cluster;

    TestCluster of(Path dir) {
        if (!dir.equals(this.dir)) {
            close();
            cluster = TestCluster.create();
            this.dir = dir;
        }
        return cluster;
    }

    /** {@code node}'s process starts (again) on {@code dir}'s database: a new pool, a new registration, its store. */
    PostgresSandboxStore start(Path dir, NodeId node) {
        TestCluster cluster = of(dir);
        cluster.closeDatabase();
        return cluster.start(node);
    }

    /** Closes the current cluster's pool, if there is a cluster (a store's close; the database stays). */
    void closeDatabase() {
        if (cluster != null) {
            cluster.closeDatabase();
        }
    }

    @Override
    public void close() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
            dir = null;
        }
    }
}
