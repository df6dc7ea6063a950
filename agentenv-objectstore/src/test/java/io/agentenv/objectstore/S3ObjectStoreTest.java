package io.agentenv.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;

/** The contract against S3Proxy (filesystem provider) in its own JVM, plus what only an S3 store has. */
class S3ObjectStoreTest extends ObjectStoreContract {

    private static final String BUCKET = "objects";
    private static final AtomicInteger STORES = new AtomicInteger();

    private static S3ProxyServer server;

    /** Each test's keys live under their own prefix in the one bucket. */
    private String keyPrefix;

    @BeforeAll
    static void startServer() throws Exception {
        server = S3ProxyServer.start();
        server.createBucket(BUCKET);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @Override
    protected ObjectStore openStore() {
        keyPrefix = "test-" + STORES.incrementAndGet() + "/";
        return new S3ObjectStore(settings().build());
    }

    /** Small parts (S3's minimum) and small listing pages, so the contract's tests cross both boundaries. */
    private S3Settings.Builder settings() {
        return server.settings(BUCKET)
                .keyPrefix(keyPrefix)
                .partSize(S3Settings.MIN_PART_SIZE)
                .listPageSize(7);
    }

    /**
     * S3 is, S3Proxy's filesystem provider is not: a GET racing a PUT of the same key can send the new bytes with the
     * old digest (or the reverse); the store reports that as Corrupt.
     */
    @Override
    protected boolean overwritesAreAtomic() {
        return false;
    }

    @Override
    protected void damage(ObjectKey key, long offset) throws Exception {
        Bytes.flipBit(server.dataDir().resolve(BUCKET).resolve(keyPrefix + key.value()), offset);
    }

    @Test
    void theDigestIsUserMetadataAndTheServersChecksum() throws Exception {
        ObjectKey key = ObjectKey.of("small");
        ObjectInfo info = store.put(key, TestContent.writer(1, 1000));

        try (S3Client client = server.client()) {
            HeadObjectResponse head = client.headObject(
                    b -> b.bucket(BUCKET).key(keyPrefix + "small").checksumMode(ChecksumMode.ENABLED));
            assertThat(head.metadata()).containsEntry("sha256", info.sha256());
            assertThat(head.checksumSHA256())
                    .isEqualTo(Base64.getEncoder().encodeToString(Sha256.bytes(info.sha256())));
        }
    }

    @Test
    void objectsLargerThanAPartGoUpInParts() throws Exception {
        ObjectKey key = ObjectKey.of("parts");
        long size = 2 * S3Settings.MIN_PART_SIZE + 1;
        ObjectInfo info = store.put(key, TestContent.writer(2, size));

        try (S3Client client = server.client()) {
            HeadObjectResponse head = client.headObject(b -> b.bucket(BUCKET).key(keyPrefix + "parts"));
            assertThat(head.eTag()).endsWith("-3\"");
            assertThat(head.metadata()).containsEntry("sha256", info.sha256());
        }
        Path target = scratch.resolve("parts");
        store.get(key, target);
        assertThat(TestContent.sha256(target)).isEqualTo(TestContent.sha256(2, size));
    }

    @Test
    void contentThatChangesBetweenPassesIsRefusedAndNothingIsStored() throws Exception {
        ObjectKey key = ObjectKey.of("unstable");
        AtomicInteger passes = new AtomicInteger();
        long size = S3Settings.MIN_PART_SIZE + 100;

        assertThatThrownBy(() -> store.put(key, out -> TestContent.write(passes.incrementAndGet(), size, out)))
                .isInstanceOf(ObjectStoreException.Failed.class)
                .hasMessageContaining("changed between hashing");

        assertThat(passes).hasValue(2);
        assertThat(store.stat(key)).isEmpty();
        try (S3Client client = server.client()) {
            assertThat(client.listMultipartUploads(b -> b.bucket(BUCKET).prefix(keyPrefix))
                            .uploads())
                    .isEmpty();
        }
    }

    @Test
    void smallContentIsProducedOnce() throws Exception {
        AtomicInteger passes = new AtomicInteger();
        store.put(ObjectKey.of("once"), out -> {
            passes.incrementAndGet();
            TestContent.write(3, S3Settings.MIN_PART_SIZE, out);
        });

        assertThat(passes).hasValue(1);
    }

    @Test
    void anObjectWithoutADigestIsCorrupt() throws Exception {
        try (S3Client client = server.client()) {
            client.putObject(b -> b.bucket(BUCKET).key(keyPrefix + "foreign"), RequestBody.fromString("not ours"));
        }
        ObjectKey key = ObjectKey.of("foreign");
        Path target = scratch.resolve("foreign");

        assertThatThrownBy(() -> store.stat(key)).isInstanceOf(ObjectStoreException.Corrupt.class);
        assertThatThrownBy(() -> store.get(key, target)).isInstanceOf(ObjectStoreException.Corrupt.class);
        assertThat(target).doesNotExist();
        assertThat(store.list("")).extracting(ObjectEntry::key).containsExactly(key);
    }

    @Test
    void keysThatAreNotValidKeysAreLeftOutOfListings() throws Exception {
        try (S3Client client = server.client()) {
            client.putObject(b -> b.bucket(BUCKET).key(keyPrefix + "dir/.hidden"), RequestBody.fromString("x"));
            client.putObject(b -> b.bucket(BUCKET).key(keyPrefix + "dir/with space"), RequestBody.fromString("x"));
        }
        store.put(ObjectKey.of("dir/fine"), TestContent.writer(1, 1));

        assertThat(store.list("dir/")).extracting(ObjectEntry::key).containsExactly(ObjectKey.of("dir/fine"));
    }

    @Test
    void aMissingBucketOrWrongKeysFail() throws Exception {
        try (ObjectStore missing =
                new S3ObjectStore(server.settings("no-such-bucket").build())) {
            assertThatThrownBy(() -> missing.put(ObjectKey.of("k"), TestContent.writer(1, 1)))
                    .isInstanceOf(ObjectStoreException.Failed.class);
            assertThatThrownBy(() -> missing.list("")).isInstanceOf(ObjectStoreException.Failed.class);
        }
        try (ObjectStore wrongKeys = new S3ObjectStore(settings()
                .credentials(new S3Credentials("agentenv-test", "wrong"))
                .build())) {
            assertThatThrownBy(() -> wrongKeys.put(ObjectKey.of("k"), TestContent.writer(1, 1)))
                    .isInstanceOf(ObjectStoreException.Failed.class);
        }
    }

    @Test
    void aPortNobodyListensOnIsUnavailableWithinSeconds() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            port = socket.getLocalPort();
        }
        try (ObjectStore unreachable = new S3ObjectStore(
                settings().endpoint(URI.create("http://127.0.0.1:" + port)).build())) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> unreachable.stat(ObjectKey.of("k")))
                    .isInstanceOf(ObjectStoreException.Unavailable.class);
            assertThatThrownBy(() -> unreachable.put(ObjectKey.of("k"), TestContent.writer(1, 10)))
                    .isInstanceOf(ObjectStoreException.Unavailable.class);
            assertThatThrownBy(() -> unreachable.get(ObjectKey.of("k"), scratch.resolve("t")))
                    .isInstanceOf(ObjectStoreException.Unavailable.class);
            assertThatThrownBy(() -> unreachable.list("")).isInstanceOf(ObjectStoreException.Unavailable.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        }
    }

    @Test
    void aServerThatNeverAnswersIsUnavailableAfterItsTimeouts() throws Exception {
        List<Socket> accepted = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket()) {
            silent.bind(new InetSocketAddress("127.0.0.1", 0));
            Thread acceptor = Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        Socket socket = silent.accept();
                        synchronized (accepted) {
                            accepted.add(socket);
                        }
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            S3Settings hanging = settings()
                    .endpoint(URI.create("http://127.0.0.1:" + silent.getLocalPort()))
                    .socketTimeout(Duration.ofSeconds(1))
                    .maxAttempts(2)
                    .build();
            try (ObjectStore store = new S3ObjectStore(hanging)) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> store.stat(ObjectKey.of("k")))
                        .isInstanceOf(ObjectStoreException.Unavailable.class);
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            } finally {
                silent.close();
                acceptor.join();
                synchronized (accepted) {
                    for (Socket socket : accepted) {
                        socket.close();
                    }
                }
            }
            assertThat(accepted).isNotEmpty();
        }
    }
}
