package io.agentenv.objectstore;

import static java.util.Objects.requireNonNull;

import java.net.URI;
import java.time.Duration;
import java.util.Optional;

/**
 * Where and how {@link S3ObjectStore} reaches its bucket. {@link #builder} starts from the defaults.
 *
 * @param bucket         the bucket (it must exist: the store never creates one)
 * @param keyPrefix      put before every key in the bucket ({@code ""}, or a prefix ending in {@code '/'}), so
 *                       several clusters can share a bucket
 * @param region         the signing region ({@code us-east-1} for most S3-compatible servers)
 * @param endpoint       the server's URL, for anything but AWS itself (MinIO, Ceph RGW, S3Proxy...)
 * @param pathStyle      {@code http://host/bucket/key} rather than {@code http://bucket.host/key}; most
 *                       S3-compatible servers want it
 * @param credentials    a fixed key pair, or empty for the SDK's default chain (environment, profile, instance role)
 * @param partSize       objects larger than this are uploaded in parts of this size (5 MiB at least, S3's minimum;
 *                       a part is buffered in memory while it is sent)
 * @param connectTimeout how long to wait for a TCP connection
 * @param socketTimeout  how long a read may wait for the next byte
 * @param uploadTimeout  how long one attempt at uploading one part (or a whole small object) may take
 * @param maxAttempts    attempts per request, the first included (the SDK's standard retries, with back-off)
 * @param maxConnections the HTTP connection pool's size
 * @param listPageSize   keys per listing request (1 to 1000)
 */
public record S3Settings(
        String bucket,
        String keyPrefix,
        String region,
        Optional<URI> endpoint,
        boolean pathStyle,
        Optional<S3Credentials> credentials,
        long partSize,
        Duration connectTimeout,
        Duration socketTimeout,
        Duration uploadTimeout,
        int maxAttempts,
        int maxConnections,
        int listPageSize) {

    /** S3's smallest part (all but the last part of a multipart upload). */
    public static final long MIN_PART_SIZE = 5L << 20;
    /** The largest part this store buffers. */
    public static final long MAX_PART_SIZE = 1L << 30;

    public S3Settings {
        requireNonNull(bucket, "bucket");
        requireNonNull(keyPrefix, "keyPrefix");
        requireNonNull(region, "region");
        requireNonNull(endpoint, "endpoint");
        requireNonNull(credentials, "credentials");
        requireNonNull(connectTimeout, "connectTimeout");
        requireNonNull(socketTimeout, "socketTimeout");
        requireNonNull(uploadTimeout, "uploadTimeout");
        if (bucket.isBlank()) {
            throw new IllegalArgumentException("bucket is blank");
        }
        if (!keyPrefix.isEmpty()
                && (!keyPrefix.endsWith("/") || !ObjectKey.isValid(keyPrefix.substring(0, keyPrefix.length() - 1)))) {
            throw new IllegalArgumentException("keyPrefix must be empty or a valid key followed by '/'");
        }
        if (partSize < MIN_PART_SIZE || partSize > MAX_PART_SIZE) {
            throw new IllegalArgumentException("partSize must be between 5 MiB and 1 GiB");
        }
        if (connectTimeout.isNegative()
                || connectTimeout.isZero()
                || socketTimeout.isNegative()
                || socketTimeout.isZero()
                || uploadTimeout.isNegative()
                || uploadTimeout.isZero()) {
            throw new IllegalArgumentException("timeouts must be positive");
        }
        if (maxAttempts < 1 || maxConnections < 1) {
            throw new IllegalArgumentException("maxAttempts and maxConnections must be >= 1");
        }
        if (listPageSize < 1 || listPageSize > 1000) {
            throw new IllegalArgumentException("listPageSize must be between 1 and 1000");
        }
    }

    /**
     * Settings for {@code bucket} with the defaults: AWS in {@code us-east-1} with the default credential chain,
     * 64 MiB parts, connections within 2 s, reads stalled for 30 s and part uploads taking 10 min failing, 3
     * attempts, 50 connections, 1000 keys a page.
     */
    public static Builder builder(String bucket) {
        return new Builder(bucket);
    }

    /** A builder that starts from these settings. */
    public Builder toBuilder() {
        Builder builder = new Builder(bucket);
        builder.keyPrefix = keyPrefix;
        builder.region = region;
        builder.endpoint = endpoint;
        builder.pathStyle = pathStyle;
        builder.credentials = credentials;
        builder.partSize = partSize;
        builder.connectTimeout = connectTimeout;
        builder.socketTimeout = socketTimeout;
        builder.uploadTimeout = uploadTimeout;
        builder.maxAttempts = maxAttempts;
        builder.maxConnections = maxConnections;
        builder.listPageSize = listPageSize;
        return builder;
    }

    /** Builds {@link S3Settings}; each setter changes one setting (see the record's components). */
    public static final class Builder {
        private final String bucket;
        private String keyPrefix = "";
        private String region = "us-east-1";
        private Optional<URI> endpoint = Optional.empty();
        private boolean pathStyle;
        private Optional<S3Credentials> credentials = Optional.empty();
        private long partSize = 64L << 20;
        private Duration connectTimeout = Duration.ofSeconds(2);
        private Duration socketTimeout = Duration.ofSeconds(30);
        private Duration uploadTimeout = Duration.ofMinutes(10);
        private int maxAttempts = 3;
        private int maxConnections = 50;
        private int listPageSize = 1000;

        private Builder(String bucket) {
            this.bucket = bucket;
        }

        /** Sets {@link S3Settings#keyPrefix()}. */
        public Builder keyPrefix(String value) {
            this.keyPrefix = value;
            return this;
        }

        /** Sets {@link S3Settings#region()}. */
        public Builder region(String value) {
            this.region = value;
            return this;
        }

        /** Sets {@link S3Settings#endpoint()}. */
        public Builder endpoint(URI value) {
            this.endpoint = Optional.of(value);
            return this;
        }

        /** Sets {@link S3Settings#pathStyle()}. */
        public Builder pathStyle(boolean value) {
            this.pathStyle = value;
            return this;
        }

        /** Sets {@link S3Settings#credentials()}. */
        public Builder credentials(S3Credentials value) {
            this.credentials = Optional.of(value);
            return this;
        }

        /** Sets {@link S3Settings#partSize()}. */
        public Builder partSize(long value) {
            this.partSize = value;
            return this;
        }

        /** Sets {@link S3Settings#connectTimeout()}. */
        public Builder connectTimeout(Duration value) {
            this.connectTimeout = value;
            return this;
        }

        /** Sets {@link S3Settings#socketTimeout()}. */
        public Builder socketTimeout(Duration value) {
            this.socketTimeout = value;
            return this;
        }

        /** Sets {@link S3Settings#uploadTimeout()}. */
        public Builder uploadTimeout(Duration value) {
            this.uploadTimeout = value;
            return this;
        }

        /** Sets {@link S3Settings#maxAttempts()}. */
        public Builder maxAttempts(int value) {
            this.maxAttempts = value;
            return this;
        }

        /** Sets {@link S3Settings#maxConnections()}. */
        public Builder maxConnections(int value) {
            this.maxConnections = value;
            return this;
        }

        /** Sets {@link S3Settings#listPageSize()}. */
        public Builder listPageSize(int value) {
            this.listPageSize = value;
            return this;
        }

        /**
         * The settings.
         *
         * @throws IllegalArgumentException if one is out of range
         */
        public S3Settings build() {
            return new S3Settings(
                    bucket,
                    keyPrefix,
                    region,
                    endpoint,
                    pathStyle,
                    credentials,
                    partSize,
                    connectTimeout,
                    socketTimeout,
                    uploadTimeout,
                    maxAttempts,
                    maxConnections,
                    listPageSize);
        }
    }
}
