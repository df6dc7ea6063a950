package io.agentenv.objectstore;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * Objects in an S3 bucket (AWS, or any S3-compatible server), through the AWS SDK v2's sync client on Apache
 * HttpClient 5.
 *
 * <p>Each object's SHA-256 is stored as user metadata ({@code x-amz-meta-sha256}) and also sent as S3's own
 * {@code x-amz-checksum-sha256}, so the server refuses bytes that were damaged on the way in. Metadata travel in an
 * upload's first request, so the digest must be known before the first byte is sent: {@link #put} therefore runs its
 * content twice when it is larger than one part, once to hash it and once to upload it (a file is read twice; a
 * directory tree is packed twice), and fails, uploading nothing, if the second pass differs from the first. Content
 * up to {@link S3Settings#partSize()} is held in memory after the first pass and sent with one {@code PutObject};
 * larger content goes up as a multipart upload, one part at a time, each part held in memory while it is sent (with
 * its own SHA-256 checksum; parts grow beyond the setting where S3's 10,000 parts would not do) and the upload
 * aborted on any failure. S3 makes an object visible only when its
 * {@code PutObject} or {@code CompleteMultipartUpload} succeeds, so readers never see a part.
 *
 * <p>Reads check the bytes against the metadata digest as they stream (the SDK's own response checksums are off:
 * this check covers them and reports {@link ObjectStoreException.Corrupt}). Connection failures, timeouts, throttling
 * and server errors, once the SDK's bounded retries are spent, are {@link ObjectStoreException.Unavailable}; with
 * the default settings a server that cannot be reached fails a call within a few seconds.
 */
public final class S3ObjectStore implements ObjectStore {

    /** The user metadata key the digest is stored under ({@code x-amz-meta-sha256}). */
    static final String SHA256_METADATA = "sha256";

    private static final String CONTENT_TYPE = "application/octet-stream";
    /** S3's most parts in one upload. */
    private static final long MAX_PARTS = 10_000;

    private final S3Settings settings;
    private final S3Client client;
    private final AwsRequestOverrideConfiguration uploadAttempt;

    /** A store on the bucket {@code settings} name; the bucket must exist. */
    public S3ObjectStore(S3Settings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
        AwsCredentialsProvider credentials = settings.credentials()
                .<AwsCredentialsProvider>map(c -> StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(c.accessKeyId(), c.secretAccessKey())))
                .orElseGet(() -> DefaultCredentialsProvider.builder().build());
        S3ClientBuilder builder = S3Client.builder()
                .region(Region.of(settings.region()))
                .forcePathStyle(settings.pathStyle())
                .credentialsProvider(credentials)
                .httpClientBuilder(Apache5HttpClient.builder()
                        .connectionTimeout(settings.connectTimeout())
                        .socketTimeout(settings.socketTimeout())
                        .connectionAcquisitionTimeout(settings.uploadTimeout())
                        .maxConnections(settings.maxConnections()))
                .overrideConfiguration(o -> o.retryStrategy(r -> r.maxAttempts(settings.maxAttempts())))
                // checksums are chosen per request below; responses are checked against the metadata digest
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        settings.endpoint().ifPresent(builder::endpointOverride);
        this.client = builder.build();
        this.uploadAttempt = AwsRequestOverrideConfiguration.builder()
                .apiCallAttemptTimeout(settings.uploadTimeout())
                .build();
    }

    /** The settings this store was made with. */
    public S3Settings settings() {
        return settings;
    }

    @Override
    public ObjectInfo put(ObjectKey key, ContentWriter content) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(content, "content");
        FirstPass first = new FirstPass(settings.partSize());
        produce(key, content, first, null);
        ObjectInfo info = new ObjectInfo(key, first.count(), first.sha256());
        String name = name(key);
        if (first.bytes() != null) {
            byte[] bytes = first.bytes();
            int length = (int) info.size();
            call(
                    "put " + key,
                    key,
                    () -> client.putObject(
                            b -> b.bucket(settings.bucket())
                                    .key(name)
                                    .contentType(CONTENT_TYPE)
                                    .metadata(metadata(info))
                                    .checksumAlgorithm(ChecksumAlgorithm.SHA256)
                                    .checksumSHA256(base64(Sha256.bytes(info.sha256())))
                                    .overrideConfiguration(uploadAttempt),
                            RequestBody.fromContentProvider(
                                    () -> new ByteArrayInputStream(bytes, 0, length), length, CONTENT_TYPE)));
            return info;
        }
        String uploadId = call(
                        "start the upload of " + key,
                        key,
                        () -> client.createMultipartUpload(b -> b.bucket(settings.bucket())
                                .key(name)
                                .contentType(CONTENT_TYPE)
                                .metadata(metadata(info))
                                .checksumAlgorithm(ChecksumAlgorithm.SHA256)))
                .uploadId();
        try {
            Parts parts = new Parts(key, name, uploadId, partSize(info.size(), settings.partSize()));
            produce(key, content, parts, parts);
            parts.finish();
            if (parts.count() != info.size() || !parts.sha256().equals(info.sha256())) {
                throw new ObjectStoreException.Failed("the content of " + key + " changed between hashing ("
                        + info.size() + " bytes, sha256 " + info.sha256() + ") and upload (" + parts.count()
                        + " bytes): nothing stored");
            }
            call(
                    "complete the upload of " + key,
                    key,
                    () -> client.completeMultipartUpload(b -> b.bucket(settings.bucket())
                            .key(name)
                            .uploadId(uploadId)
                            .multipartUpload(m -> m.parts(parts.completed()))));
            return info;
        } catch (ObjectStoreException | RuntimeException e) {
            abort(name, uploadId, e);
            throw e;
        }
    }

    @Override
    public <T> T read(ObjectKey key, ContentReader<T> reader) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(reader, "reader");
        ResponseInputStream<GetObjectResponse> in = call(
                "read " + key,
                key,
                () -> client.getObject(b -> b.bucket(settings.bucket()).key(name(key))));
        boolean complete = false;
        try {
            GetObjectResponse response = in.response();
            ObjectInfo info = info(key, response.contentLength(), response.metadata());
            T result = Transfers.readVerified(info, in, reader, e -> sourceFailure("read " + key, key, e));
            complete = true;
            return result;
        } finally {
            if (!complete) {
                in.abort(); // do not drain the rest of a large object over the connection
            }
            try {
                in.close();
            } catch (IOException | SdkException ignored) {
                // the connection is dropped; the object was read or its failure is being reported
            }
        }
    }

    @Override
    public Optional<ObjectInfo> stat(ObjectKey key) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        HeadObjectResponse head;
        try {
            head = call(
                    "stat " + key,
                    key,
                    () -> client.headObject(b -> b.bucket(settings.bucket()).key(name(key))));
        } catch (ObjectStoreException.NotFound e) {
            return Optional.empty();
        }
        return Optional.of(info(key, head.contentLength(), head.metadata()));
    }

    /** {@inheritDoc} S3 does not say whether a delete removed anything, so a HEAD comes first. */
    @Override
    public boolean delete(ObjectKey key) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        try {
            call(
                    "delete " + key,
                    key,
                    () -> client.headObject(b -> b.bucket(settings.bucket()).key(name(key))));
        } catch (ObjectStoreException.NotFound e) {
            return false;
        }
        call(
                "delete " + key,
                key,
                () -> client.deleteObject(b -> b.bucket(settings.bucket()).key(name(key))));
        return true;
    }

    @Override
    public List<ObjectEntry> list(String prefix) throws ObjectStoreException {
        ObjectKey.checkPrefix(prefix);
        String keyPrefix = settings.keyPrefix();
        return call("list " + prefix, null, () -> {
            List<ObjectEntry> entries = new ArrayList<>();
            for (ListObjectsV2Response page : client.listObjectsV2Paginator(
                    b -> b.bucket(settings.bucket()).prefix(keyPrefix + prefix).maxKeys(settings.listPageSize()))) {
                for (S3Object object : page.contents()) {
                    String value = object.key().substring(keyPrefix.length());
                    if (ObjectKey.isValid(value)) { // anything else in the bucket was not written by a store
                        entries.add(new ObjectEntry(new ObjectKey(value), object.size()));
                    }
                }
            }
            entries.sort(Comparator.comparing(ObjectEntry::key));
            return entries;
        });
    }

    @Override
    public void close() {
        client.close();
    }

    /**
     * The part size for {@code size} bytes: the setting, or larger where the setting would need more than S3's 10,000
     * parts (above 625 GiB with 64 MiB parts), rounded up to whole MiB.
     */
    static int partSize(long size, long configured) throws ObjectStoreException.Failed {
        long needed = ((Math.ceilDiv(size, MAX_PARTS) + (1 << 20) - 1) >> 20) << 20;
        long part = Math.max(configured, needed);
        if (part > S3Settings.MAX_PART_SIZE) {
            throw new ObjectStoreException.Failed(size + " bytes need parts of " + part + " bytes, above the "
                    + S3Settings.MAX_PART_SIZE + " this store buffers");
        }
        return (int) part;
    }

    private String name(ObjectKey key) {
        return settings.keyPrefix() + key.value();
    }

    private static Map<String, String> metadata(ObjectInfo info) {
        return Map.of(SHA256_METADATA, info.sha256());
    }

    private static String base64(byte[] digest) {
        return Base64.getEncoder().encodeToString(digest);
    }

    /** The recorded size and digest of an object, from its length and metadata. */
    private static ObjectInfo info(ObjectKey key, Long length, Map<String, String> metadata)
            throws ObjectStoreException.Corrupt {
        String sha256 = metadata.get(SHA256_METADATA);
        if (!ObjectInfo.isSha256(sha256) || length == null) {
            throw new ObjectStoreException.Corrupt(
                    key + ": no sha256 metadata or length (not written by an object store?)");
        }
        return new ObjectInfo(key, length, sha256);
    }

    /** Runs {@code content} into {@code out}; a failure of {@code uploads} (if any) is reported as it is. */
    private static void produce(ObjectKey key, ContentWriter content, OutputStream out, Parts uploads)
            throws ObjectStoreException {
        try {
            content.writeTo(out);
        } catch (IOException | RuntimeException e) {
            if (uploads != null && uploads.failure != null) {
                throw uploads.failure;
            }
            throw new ObjectStoreException.Failed("producing the content of " + key + ": " + e, e);
        }
    }

    private void abort(String name, String uploadId, Exception primary) {
        try {
            client.abortMultipartUpload(
                    b -> b.bucket(settings.bucket()).key(name).uploadId(uploadId));
        } catch (SdkException e) {
            primary.addSuppressed(e); // the bucket's lifecycle rule for incomplete uploads removes the parts
        }
    }

    private <T> T call(String what, ObjectKey key, Supplier<T> request) throws ObjectStoreException {
        try {
            return request.get();
        } catch (SdkException e) {
            throw failure(what, key, e);
        }
    }

    private ObjectStoreException sourceFailure(String what, ObjectKey key, Exception e) {
        if (e instanceof SdkException sdk) {
            return failure(what, key, sdk);
        }
        return new ObjectStoreException.Unavailable(what + ": " + e, e);
    }

    /** What an SDK failure means to a caller. */
    static ObjectStoreException failure(String what, ObjectKey key, SdkException e) {
        if (e instanceof NoSuchKeyException && key != null) {
            return new ObjectStoreException.NotFound(key);
        }
        if (e instanceof S3Exception s3) {
            int status = s3.statusCode();
            String code =
                    s3.awsErrorDetails() == null ? null : s3.awsErrorDetails().errorCode();
            if (status == 404 && key != null && !"NoSuchBucket".equals(code)) {
                return new ObjectStoreException.NotFound(key);
            }
            if (status >= 500 || status == 429 || status == 408) {
                return new ObjectStoreException.Unavailable(what + ": " + s3.getMessage(), e);
            }
            return new ObjectStoreException.Failed(what + ": " + s3.getMessage(), e);
        }
        if (e instanceof ApiCallTimeoutException
                || e instanceof ApiCallAttemptTimeoutException
                || (e instanceof SdkClientException && causedByIo(e))) {
            return new ObjectStoreException.Unavailable(what + ": " + e.getMessage(), e);
        }
        return new ObjectStoreException.Failed(what + ": " + e.getMessage(), e);
    }

    private static boolean causedByIo(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IOException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The first pass over the content: counts and hashes it, and keeps it while it fits in one part (then it is
     * uploaded from memory, and the content runs only once).
     */
    private static final class FirstPass extends OutputStream {
        private final long limit;
        private final MessageDigest digest = Sha256.newDigest();
        private byte[] buffer = new byte[8192];
        private long count;

        FirstPass(long limit) {
            this.limit = limit;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            digest.update(b, off, len);
            long end = count + len;
            if (buffer != null && end <= limit) {
                if (end > buffer.length) {
                    buffer = Arrays.copyOf(buffer, (int) Math.min(limit, Math.max(end, 2L * buffer.length)));
                }
                System.arraycopy(b, off, buffer, (int) count, len);
            } else {
                buffer = null; // larger than a part: a multipart upload, from a second pass
            }
            count = end;
        }

        @Override
        public void close() {
            // content writers may close what they were given
        }

        long count() {
            return count;
        }

        String sha256() {
            return Sha256.hex(digest.digest());
        }

        /** The content, if it fit in one part (its first {@link #count()} bytes), else null. */
        byte[] bytes() {
            return buffer;
        }
    }

    /** The second pass: the content cut into parts, each uploaded once it is full, all of it hashed again. */
    private final class Parts extends OutputStream {
        private final ObjectKey key;
        private final String name;
        private final String uploadId;
        private final byte[] buffer;
        private final MessageDigest whole = Sha256.newDigest();
        private final MessageDigest part = Sha256.newDigest();
        private final List<CompletedPart> completed = new ArrayList<>();
        private int filled;
        private long count;
        private ObjectStoreException failure;

        Parts(ObjectKey key, String name, String uploadId, int partSize) {
            this.key = key;
            this.name = name;
            this.uploadId = uploadId;
            this.buffer = new byte[partSize];
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            int at = off;
            int left = len;
            while (left > 0) {
                int n = Math.min(left, buffer.length - filled);
                System.arraycopy(b, at, buffer, filled, n);
                whole.update(b, at, n);
                part.update(b, at, n);
                filled += n;
                count += n;
                at += n;
                left -= n;
                if (filled == buffer.length) {
                    upload();
                }
            }
        }

        @Override
        public void close() {
            // content writers may close what they were given
        }

        /** Uploads the last, partly filled part. */
        void finish() throws ObjectStoreException {
            if (filled > 0 || completed.isEmpty()) {
                try {
                    upload();
                } catch (IOException e) {
                    throw failure;
                }
            }
        }

        private void upload() throws IOException {
            int number = completed.size() + 1;
            int length = filled;
            String checksum = base64(part.digest());
            try {
                UploadPartResponse response = client.uploadPart(
                        b -> b.bucket(settings.bucket())
                                .key(name)
                                .uploadId(uploadId)
                                .partNumber(number)
                                .contentLength((long) length)
                                .checksumAlgorithm(ChecksumAlgorithm.SHA256)
                                .checksumSHA256(checksum)
                                .overrideConfiguration(uploadAttempt),
                        RequestBody.fromContentProvider(
                                () -> new ByteArrayInputStream(buffer, 0, length), length, CONTENT_TYPE));
                completed.add(CompletedPart.builder()
                        .partNumber(number)
                        .eTag(response.eTag())
                        .checksumSHA256(response.checksumSHA256())
                        .build());
                filled = 0;
            } catch (SdkException e) {
                failure = failure("upload part " + number + " of " + key, key, e);
                throw new IOException(failure.getMessage(), e);
            }
        }

        long count() {
            return count;
        }

        String sha256() {
            return Sha256.hex(whole.digest());
        }

        List<CompletedPart> completed() {
            return completed;
        }
    }
}
