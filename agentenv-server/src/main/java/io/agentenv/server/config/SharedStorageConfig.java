package io.agentenv.server.config;

import static java.util.Objects.requireNonNull;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Where the nodes of a cluster keep what must move between them (paused sandboxes' states, snapshots): an
 * S3-compatible bucket, or a directory every node mounts (NFS, CephFS, ...). S3 credentials come from the AWS SDK's
 * default chain ({@code AWS_ACCESS_KEY_ID} and {@code AWS_SECRET_ACCESS_KEY}, a profile, an instance role).
 */
public sealed interface SharedStorageConfig {
    String DIR = "AENV_OBJECT_STORE_DIR";
    String S3_BUCKET = "AENV_OBJECT_STORE_S3_BUCKET";
    String S3_ENDPOINT = "AENV_OBJECT_STORE_S3_ENDPOINT";
    String S3_REGION = "AENV_OBJECT_STORE_S3_REGION";
    String S3_PREFIX = "AENV_OBJECT_STORE_S3_PREFIX";

    /**
     * A directory every node mounts at the same place ({@code AENV_OBJECT_STORE_DIR}).
     *
     * @param dir the directory (absolute)
     */
    record Directory(Path dir) implements SharedStorageConfig {
        public Directory {
            requireNonNull(dir, "dir is null");
            if (!dir.isAbsolute()) {
                throw new IllegalArgumentException(DIR + " must be an absolute path: " + dir);
            }
        }
    }

    /**
     * An S3-compatible bucket.
     *
     * @param bucket the bucket, which must exist ({@code AENV_OBJECT_STORE_S3_BUCKET})
     * @param endpoint the server's URL for anything but AWS itself, addressed path-style
     *     ({@code AENV_OBJECT_STORE_S3_ENDPOINT}); empty: AWS
     * @param region the signing region ({@code AENV_OBJECT_STORE_S3_REGION}, default {@code us-east-1})
     * @param keyPrefix put before every key, so that clusters can share a bucket ({@code AENV_OBJECT_STORE_S3_PREFIX},
     *     default none; a {@code '/'} is added when missing)
     */
    record S3(String bucket, Optional<URI> endpoint, String region, String keyPrefix) implements SharedStorageConfig {
        public S3 {
            requireNonNull(bucket, "bucket is null");
            requireNonNull(endpoint, "endpoint is null");
            requireNonNull(region, "region is null");
            requireNonNull(keyPrefix, "keyPrefix is null");
            endpoint.ifPresent(uri -> {
                if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                    throw new IllegalArgumentException(S3_ENDPOINT + " must be an http(s) URL: " + uri);
                }
            });
        }
    }

    /** The shared storage {@code values} name; empty when none is. Naming both a directory and a bucket is an error. */
    static Optional<SharedStorageConfig> from(Map<String, String> values) {
        String dir = values.get(DIR);
        String bucket = values.get(S3_BUCKET);
        if (dir != null && bucket != null) {
            throw new IllegalArgumentException("set " + DIR + " or " + S3_BUCKET + ", not both");
        }
        if (dir != null) {
            return Optional.of(new Directory(Path.of(dir)));
        }
        if (bucket == null) {
            for (String key : new String[] {S3_ENDPOINT, S3_REGION, S3_PREFIX}) {
                if (values.containsKey(key)) {
                    throw new IllegalArgumentException(key + " is set but " + S3_BUCKET + " is not");
                }
            }
            return Optional.empty();
        }
        String prefix = values.getOrDefault(S3_PREFIX, "");
        return Optional.of(new S3(
                bucket,
                Optional.ofNullable(values.get(S3_ENDPOINT)).map(URI::create),
                values.getOrDefault(S3_REGION, "us-east-1"),
                prefix.isEmpty() || prefix.endsWith("/") ? prefix : prefix + "/"));
    }
}
