package io.agentenv.server.cluster;

import static java.util.Objects.requireNonNull;

import io.agentenv.objectstore.FileSystemObjectStore;
import io.agentenv.objectstore.ObjectEntry;
import io.agentenv.objectstore.ObjectKey;
import io.agentenv.objectstore.ObjectStore;
import io.agentenv.objectstore.ObjectStoreException;
import io.agentenv.objectstore.S3ObjectStore;
import io.agentenv.objectstore.S3Settings;
import io.agentenv.objectstore.TarTrees;
import io.agentenv.orchestrator.SharedArtifacts;
import io.agentenv.server.config.SharedStorageConfig;
import io.agentenv.spi.SharedFiles;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * The orchestrator's {@link SharedArtifacts} in the cluster's object store: each paused state or snapshot is one tar
 * object ({@link TarTrees}) under {@code artifacts/<key>}, checked against its SHA-256 when fetched. The backend's
 * {@link SharedFiles} (the template files its states are made on) are tar objects under {@code backend-files/<key>}
 * ({@link #backendFiles()}).
 */
public final class ObjectStoreArtifacts implements SharedArtifacts, AutoCloseable {
    private static final String PREFIX = "artifacts";
    private static final String BACKEND_FILES = "backend-files";

    private final ObjectStore store;
    private final TarTrees trees;

    /** Artifacts in {@code store}; a tree being stored is spooled in {@code spoolDir} ({@link TarTrees}). */
    public ObjectStoreArtifacts(ObjectStore store, Path spoolDir) {
        this.store = requireNonNull(store, "store is null");
        this.trees = new TarTrees(store, spoolDir);
    }

    /** Opens the store {@code config} names. */
    public static ObjectStore open(SharedStorageConfig config) {
        try {
            return switch (config) {
                case SharedStorageConfig.Directory d -> new FileSystemObjectStore(d.dir());
                case SharedStorageConfig.S3 s3 -> {
                    S3Settings.Builder settings =
                            S3Settings.builder(s3.bucket()).region(s3.region()).keyPrefix(s3.keyPrefix());
                    s3.endpoint().ifPresent(uri -> settings.endpoint(uri).pathStyle(true));
                    yield new S3ObjectStore(settings.build());
                }
            };
        } catch (ObjectStoreException e) {
            throw new IllegalStateException("cannot open the shared storage " + config + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void put(String key, Path dir) throws IOException {
        putTree(objectKey(key), dir);
    }

    @Override
    public void get(String key, Path target) throws IOException {
        getTree(objectKey(key), target);
    }

    @Override
    public void delete(String key) throws IOException {
        try {
            store.delete(objectKey(key));
        } catch (ObjectStoreException e) {
            throw new IOException("deleting " + key + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void deleteAll(String prefix) throws IOException {
        try {
            for (ObjectEntry entry : store.list(PREFIX + "/" + prefix)) {
                store.delete(entry.key());
            }
        } catch (ObjectStoreException e) {
            throw new IOException("deleting " + prefix + "* failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        store.close();
    }

    /** The backend's shared files in the same store (closed with it). */
    public SharedFiles backendFiles() {
        return new SharedFiles() {
            @Override
            public boolean contains(String key) throws IOException {
                try {
                    return store.stat(filesKey(key)).isPresent();
                } catch (ObjectStoreException e) {
                    throw new IOException("looking up " + key + " failed: " + e.getMessage(), e);
                }
            }

            @Override
            public void put(String key, Path dir) throws IOException {
                putTree(filesKey(key), dir);
            }

            @Override
            public void get(String key, Path target) throws IOException {
                getTree(filesKey(key), target);
            }
        };
    }

    private void putTree(ObjectKey key, Path dir) throws IOException {
        try {
            trees.put(key, dir);
        } catch (ObjectStoreException e) {
            throw new IOException("storing " + key + " failed: " + e.getMessage(), e);
        }
    }

    /** Unpacks {@code key} as {@code target}; nothing stored is a {@link NoSuchFileException} naming it. */
    private void getTree(ObjectKey key, Path target) throws IOException {
        try {
            trees.get(key, target);
        } catch (ObjectStoreException.NotFound e) {
            NoSuchFileException missing = new NoSuchFileException(key.toString());
            missing.initCause(e);
            throw missing;
        } catch (ObjectStoreException e) {
            throw new IOException("fetching " + key + " failed: " + e.getMessage(), e);
        }
    }

    private static ObjectKey filesKey(String key) {
        if (!SharedFiles.isValidKey(key)) {
            throw new IllegalArgumentException("not a shared file key: " + key);
        }
        return new ObjectKey(BACKEND_FILES + "/" + key);
    }

    private static ObjectKey objectKey(String key) {
        return new ObjectKey(PREFIX + "/" + key);
    }
}
