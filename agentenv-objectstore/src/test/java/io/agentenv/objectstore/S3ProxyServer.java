package io.agentenv.objectstore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * S3Proxy (an S3 server on the local file system) on 127.0.0.1 and a free port, for tests and local clusters. Each
 * instance is its own JVM, started from S3Proxy's self-contained jar, with its objects in a fresh temp directory
 * (S3Proxy's {@code filesystem} provider: bucket {@code b}, key {@code k} is the file {@code <dataDir>/b/k}). {@link
 * #close()} stops the process and removes the directory; a shutdown hook stops it if the JVM exits first.
 *
 * <p>S3Proxy runs in a process of its own rather than in the test JVM: its jar bundles its own Jetty, AWS SDK,
 * Jackson and logging, which would otherwise meet the versions on the project's class path (Jetty 12, the SDK this
 * module uses), and a cluster on one machine needs it as a separate server anyway. The jar's path comes from the
 * system property {@value #JAR_PROPERTY}; this module's build copies it to {@code target/s3proxy/s3proxy.jar} with
 * maven-dependency-plugin and sets the property for its tests, and another module does the same (see the module's
 * README).
 */
public final class S3ProxyServer implements AutoCloseable {

    /** The system property naming S3Proxy's jar (classifier {@code jar-with-dependencies}). */
    public static final String JAR_PROPERTY = "agentenv.s3proxy.jar";

    /** The key pair S3Proxy accepts (AWS signature v2 or v4). */
    public static final S3Credentials CREDENTIALS = new S3Credentials("agentenv-test", "agentenv-test-secret");

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final Path dir;
    private final Path data;
    private final Path log;
    private final int port;
    private final Process process;
    private final Thread stopAtExit;

    private S3ProxyServer(Path dir, int port) throws IOException {
        this.dir = dir;
        this.port = port;
        this.data = Files.createDirectories(dir.resolve("data"));
        this.log = dir.resolve("s3proxy-" + port + ".log");
        Path properties = dir.resolve("s3proxy-" + port + ".properties");
        Files.writeString(
                properties,
                String.join(
                        "\n",
                        "s3proxy.endpoint=http://127.0.0.1:" + port,
                        "s3proxy.authorization=aws-v2-or-v4",
                        "s3proxy.identity=" + CREDENTIALS.accessKeyId(),
                        "s3proxy.credential=" + CREDENTIALS.secretAccessKey(),
                        "jclouds.provider=filesystem",
                        "jclouds.identity=" + CREDENTIALS.accessKeyId(),
                        "jclouds.credential=" + CREDENTIALS.secretAccessKey(),
                        "jclouds.filesystem.basedir=" + data,
                        ""));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        this.process = new ProcessBuilder(List.of(
                        java.toString(),
                        "-Xmx256m",
                        "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1",
                        "-DLOG_LEVEL=warn",
                        "-jar",
                        jar().toString(),
                        "--properties",
                        properties.toString()))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        this.process.getOutputStream().close();
        this.stopAtExit = new Thread(this::stop, "s3proxy-" + port + "-stop");
        Runtime.getRuntime().addShutdownHook(stopAtExit);
    }

    /**
     * Starts S3Proxy and waits until it accepts connections.
     *
     * @throws IllegalStateException if {@value #JAR_PROPERTY} is not set or names no file, or S3Proxy does not
     *     start (its log is in the message)
     */
    public static S3ProxyServer start() throws IOException {
        Path dir = Files.createTempDirectory("agentenv-s3proxy-");
        try {
            String failures = "";
            for (int attempt = 1; attempt <= 3; attempt++) {
                S3ProxyServer server = new S3ProxyServer(dir, freePort());
                String failure = server.awaitListening();
                if (failure == null) {
                    return server;
                }
                server.stop();
                failures += "\n--- attempt " + attempt + ": " + failure;
            }
            throw new IllegalStateException("S3Proxy did not start:" + failures);
        } catch (IOException | RuntimeException e) {
            Transfers.deleteTree(dir);
            throw e;
        }
    }

    /** The server's URL, {@code http://127.0.0.1:<port>}. */
    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Where S3Proxy keeps the objects: bucket {@code b}, key {@code k} is {@code <dataDir>/b/k}. */
    public Path dataDir() {
        return data;
    }

    /** What S3Proxy printed so far. */
    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Settings for {@code bucket} on this server: path-style, its key pair, {@code us-east-1}. */
    public S3Settings.Builder settings(String bucket) {
        return S3Settings.builder(bucket).endpoint(endpoint()).pathStyle(true).credentials(CREDENTIALS);
    }

    /** A plain SDK client for this server (for what a store does not do: buckets, raw objects). Close it. */
    public S3Client client() {
        return S3Client.builder()
                .endpointOverride(endpoint())
                .forcePathStyle(true)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(CREDENTIALS.accessKeyId(), CREDENTIALS.secretAccessKey())))
                .httpClientBuilder(Apache5HttpClient.builder())
                .build();
    }

    /** Creates {@code bucket}. */
    public void createBucket(String bucket) {
        try (S3Client client = client()) {
            client.createBucket(b -> b.bucket(bucket));
        }
    }

    /** Stops S3Proxy and removes its directory. */
    @Override
    public void close() throws IOException {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(stopAtExit);
        } catch (IllegalStateException exiting) {
            // the JVM is shutting down and runs the hook itself
        }
        Transfers.deleteTree(dir);
    }

    private void stop() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Null once the port accepts connections, else why not (the process exited, or the wait timed out). */
    private String awaitListening() throws IOException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            if (!process.isAlive()) {
                return "exited with " + process.exitValue() + ":\n" + log();
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return null;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    return "not listening on " + port + " after " + START_TIMEOUT.toSeconds() + " s:\n" + log();
                }
                LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            }
        }
    }

    private static Path jar() {
        String value = System.getProperty(JAR_PROPERTY);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("system property " + JAR_PROPERTY
                    + " is not set: it names S3Proxy's jar-with-dependencies (the build copies it with"
                    + " maven-dependency-plugin; see agentenv-objectstore/README.md)");
        }
        Path jar = Path.of(value);
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(JAR_PROPERTY + " names " + jar + ", which is no file");
        }
        return jar;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            return socket.getLocalPort();
        }
    }
}
