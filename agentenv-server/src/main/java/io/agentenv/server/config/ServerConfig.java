package io.agentenv.server.config;

import static java.util.Objects.requireNonNull;

import io.agentenv.images.RegistrySettings;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The server's configuration, loaded once in {@code Main} and passed down. {@link #load(Map)} is the only reader of
 * {@code AENV_*} environment variables and of the optional config file ({@code AENV_CONFIG}: a Java properties file
 * with the same keys; the environment overrides it). Unknown {@code AENV_*} keys in the file are rejected so typos
 * do not pass silently.
 *
 * @param listen                address the REST API binds ({@code AENV_LISTEN}, {@code host:port}, default
 *                              {@code 0.0.0.0:3000}; port 0 picks a free port)
 * @param dataDir               state directory: SQLite store, secrets, artifacts ({@code AENV_HOME}, default
 *                              {@code /var/lib/agentenv})
 * @param backend               name of the sandbox backend factory to load ({@code AENV_BACKEND}, default
 *                              {@code container})
 * @param sandboxDomain         the domain returned to SDKs as {@code domain} ({@code AENV_SANDBOX_DOMAIN}, default none)
 * @param apiKey                the API key if configured ({@code AENV_API_KEY}); otherwise a managed file is used
 * @param defaultTimeoutV1      TTL for v1 creates and the deprecated resume without a timeout
 *                              ({@code AENV_DEFAULT_TIMEOUT_V1_SECONDS}, default 15)
 * @param defaultTimeoutV2      TTL for v2 creates and v2 connects without a timeout
 *                              ({@code AENV_DEFAULT_TIMEOUT_V2_SECONDS}, default 300)
 * @param maxRequestBytes       largest accepted request body ({@code AENV_MAX_REQUEST_BYTES}, default 1 MiB)
 * @param maxConcurrentRequests requests handled at once on virtual threads ({@code AENV_MAX_CONCURRENT_REQUESTS},
 *                              default 1024)
 * @param shutdownGrace         how long a graceful stop waits for in-flight requests ({@code AENV_SHUTDOWN_GRACE_SECONDS},
 *                              default 30)
 * @param backendSettings       the backend's own settings: every {@code AENV_BACKEND_<KEY>} (except {@code AENV_BACKEND}
 *                              itself) as lower-case {@code <key>}, handed to the backend once at start-up
 * @param customExtensionUrl    base URL of the operator's custom extension ({@code AENV_CUSTOM_EXTENSION_URL}, absolute
 *                              http(s), no query or fragment; default none: no hooks, non-empty params refused)
 * @param customExtensionTimeout deadline of one hook call ({@code AENV_CUSTOM_EXTENSION_TIMEOUT_MS}, default 5000)
 * @param metricsSampleInterval how often every running sandbox's metrics are sampled from its envd
 *                              ({@code AENV_METRICS_SAMPLE_INTERVAL_MS}, default 5000, {@value #MIN_SAMPLE_INTERVAL_MS}
 *                              to {@value #MAX_SAMPLE_INTERVAL_MS})
 * @param console               whether the web console is served under {@code /console} ({@code AENV_CONSOLE},
 *                              {@code on} or {@code off}, default {@code on})
 * @param imagesDir             where images pulled for template builds are kept by digest ({@code AENV_IMAGES_DIR},
 *                              default {@code <AENV_HOME>/images})
 * @param registries            registry mirrors ({@code AENV_IMAGES_MIRRORS}, {@code registry=mirror,...}) and the
 *                              non-loopback registries reached over plain HTTP ({@code AENV_IMAGES_INSECURE},
 *                              {@code host[:port],...})
 * @param maxTemplateFileBytes  largest file upload of a template build's COPY step
 *                              ({@code AENV_MAX_TEMPLATE_FILE_BYTES}, default 1 GiB)
 * @param trustForwardedHeaders whether requests' {@code Forwarded} and {@code X-Forwarded-*} headers say how clients
 *                              reached the server (its scheme, host and port in the URLs it answers, such as a COPY
 *                              upload's): for a server behind a TLS-terminating proxy that sets them
 *                              ({@code AENV_TRUST_FORWARDED_HEADERS}, {@code on} or {@code off}, default {@code off}:
 *                              any client could send them)
 * @param volumes               volume sizes and storage ({@code AENV_VOLUME_*}, see {@link VolumeConfig})
 * @param cluster               the cluster this server is a node of ({@code AENV_CLUSTER_*}, {@code AENV_NODE_*}, see
 *                              {@link ClusterConfig}); empty: it runs alone on its SQLite store
 */
public record ServerConfig(
        InetSocketAddress listen,
        Path dataDir,
        String backend,
        Optional<String> sandboxDomain,
        Optional<String> apiKey,
        Duration defaultTimeoutV1,
        Duration defaultTimeoutV2,
        int maxRequestBytes,
        int maxConcurrentRequests,
        Duration shutdownGrace,
        Map<String, String> backendSettings,
        Optional<URI> customExtensionUrl,
        Duration customExtensionTimeout,
        Duration metricsSampleInterval,
        boolean console,
        Path imagesDir,
        RegistrySettings registries,
        long maxTemplateFileBytes,
        boolean trustForwardedHeaders,
        VolumeConfig volumes,
        Optional<ClusterConfig> cluster) {

    public static final String CONFIG = "AENV_CONFIG";
    public static final String LISTEN = "AENV_LISTEN";
    public static final String HOME = "AENV_HOME";
    public static final String BACKEND = "AENV_BACKEND";
    public static final String SANDBOX_DOMAIN = "AENV_SANDBOX_DOMAIN";
    public static final String API_KEY = "AENV_API_KEY";
    public static final String DEFAULT_TIMEOUT_V1 = "AENV_DEFAULT_TIMEOUT_V1_SECONDS";
    public static final String DEFAULT_TIMEOUT_V2 = "AENV_DEFAULT_TIMEOUT_V2_SECONDS";
    public static final String MAX_REQUEST_BYTES = "AENV_MAX_REQUEST_BYTES";
    public static final String MAX_CONCURRENT_REQUESTS = "AENV_MAX_CONCURRENT_REQUESTS";
    public static final String SHUTDOWN_GRACE = "AENV_SHUTDOWN_GRACE_SECONDS";
    public static final String CUSTOM_EXTENSION_URL = "AENV_CUSTOM_EXTENSION_URL";
    public static final String CUSTOM_EXTENSION_TIMEOUT = "AENV_CUSTOM_EXTENSION_TIMEOUT_MS";
    public static final String METRICS_SAMPLE_INTERVAL = "AENV_METRICS_SAMPLE_INTERVAL_MS";
    public static final String CONSOLE = "AENV_CONSOLE";
    public static final String IMAGES_DIR = "AENV_IMAGES_DIR";
    public static final String IMAGES_MIRRORS = "AENV_IMAGES_MIRRORS";
    public static final String IMAGES_INSECURE = "AENV_IMAGES_INSECURE";
    public static final String MAX_TEMPLATE_FILE_BYTES = "AENV_MAX_TEMPLATE_FILE_BYTES";
    public static final String TRUST_FORWARDED_HEADERS = "AENV_TRUST_FORWARDED_HEADERS";
    public static final String VOLUME_DEFAULT_MB = "AENV_VOLUME_DEFAULT_MB";
    public static final String VOLUME_MAX_MB = "AENV_VOLUME_MAX_MB";
    public static final String VOLUME_STORAGE = "AENV_VOLUME_STORAGE";
    public static final String VOLUME_SHARED_DIR = "AENV_VOLUME_SHARED_DIR";
    /** Below this, sampling every sandbox's envd would be load of its own. */
    public static final int MIN_SAMPLE_INTERVAL_MS = 100;
    /** An hour: metrics older than that are of little use to a dashboard. */
    public static final int MAX_SAMPLE_INTERVAL_MS = 3_600_000;
    /** Prefix of the backend's own settings: {@code AENV_BACKEND_CACHE_DIR} reaches the backend as {@code cache_dir}. */
    public static final String BACKEND_SETTING_PREFIX = "AENV_BACKEND_";

    private static final Set<String> KEYS = Set.of(
            LISTEN,
            HOME,
            BACKEND,
            SANDBOX_DOMAIN,
            API_KEY,
            DEFAULT_TIMEOUT_V1,
            DEFAULT_TIMEOUT_V2,
            MAX_REQUEST_BYTES,
            MAX_CONCURRENT_REQUESTS,
            SHUTDOWN_GRACE,
            CUSTOM_EXTENSION_URL,
            CUSTOM_EXTENSION_TIMEOUT,
            METRICS_SAMPLE_INTERVAL,
            CONSOLE,
            IMAGES_DIR,
            IMAGES_MIRRORS,
            IMAGES_INSECURE,
            MAX_TEMPLATE_FILE_BYTES,
            TRUST_FORWARDED_HEADERS,
            VOLUME_DEFAULT_MB,
            VOLUME_MAX_MB,
            VOLUME_STORAGE,
            VOLUME_SHARED_DIR,
            ClusterDatabase.URL,
            ClusterDatabase.USER,
            ClusterDatabase.PASSWORD_FILE,
            ClusterConfig.NODE_ID,
            ClusterConfig.NODE_ADDRESS,
            ClusterConfig.LEASE_SECONDS,
            ClusterConfig.DEAD_AFTER_SECONDS,
            SharedStorageConfig.DIR,
            SharedStorageConfig.S3_BUCKET,
            SharedStorageConfig.S3_ENDPOINT,
            SharedStorageConfig.S3_REGION,
            SharedStorageConfig.S3_PREFIX);
    private static final Pattern BACKEND_NAME = Pattern.compile("[a-z][a-z0-9-]{0,31}");
    private static final Pattern DOMAIN = Pattern.compile("[A-Za-z0-9.-]+(:[0-9]{1,5})?");

    public ServerConfig {
        requireNonNull(listen, "listen is null");
        requireNonNull(dataDir, "dataDir is null");
        requireNonNull(backend, "backend is null");
        requireNonNull(sandboxDomain, "sandboxDomain is null");
        requireNonNull(apiKey, "apiKey is null");
        requireNonNull(defaultTimeoutV1, "defaultTimeoutV1 is null");
        requireNonNull(defaultTimeoutV2, "defaultTimeoutV2 is null");
        requireNonNull(shutdownGrace, "shutdownGrace is null");
        backendSettings = Map.copyOf(backendSettings);
        requireNonNull(customExtensionUrl, "customExtensionUrl is null");
        requireNonNull(customExtensionTimeout, "customExtensionTimeout is null");
        requireNonNull(metricsSampleInterval, "metricsSampleInterval is null");
        requireNonNull(imagesDir, "imagesDir is null");
        requireNonNull(registries, "registries is null");
        requireNonNull(volumes, "volumes is null");
        requireNonNull(cluster, "cluster is null");
        if (metricsSampleInterval.compareTo(Duration.ofMillis(MIN_SAMPLE_INTERVAL_MS)) < 0
                || metricsSampleInterval.compareTo(Duration.ofMillis(MAX_SAMPLE_INTERVAL_MS)) > 0) {
            throw new IllegalArgumentException(METRICS_SAMPLE_INTERVAL + " must be between " + MIN_SAMPLE_INTERVAL_MS
                    + " and " + MAX_SAMPLE_INTERVAL_MS + " (milliseconds): " + metricsSampleInterval.toMillis());
        }
        customExtensionUrl.ifPresent(ServerConfig::checkExtensionUrl);
        if (customExtensionTimeout.isNegative() || customExtensionTimeout.isZero()) {
            throw new IllegalArgumentException(
                    CUSTOM_EXTENSION_TIMEOUT + " must be > 0: " + customExtensionTimeout.toMillis());
        }
        if (!dataDir.isAbsolute()) {
            throw new IllegalArgumentException(HOME + " must be an absolute path: " + dataDir);
        }
        if (!imagesDir.isAbsolute()) {
            throw new IllegalArgumentException(IMAGES_DIR + " must be an absolute path: " + imagesDir);
        }
        if (!BACKEND_NAME.matcher(backend).matches()) {
            throw new IllegalArgumentException(BACKEND + " must match " + BACKEND_NAME + ": " + backend);
        }
        sandboxDomain.ifPresent(d -> {
            if (!DOMAIN.matcher(d).matches()) {
                throw new IllegalArgumentException(SANDBOX_DOMAIN + " is not a host name: " + d);
            }
        });
        if (defaultTimeoutV1.isNegative() || defaultTimeoutV2.isNegative()) {
            throw new IllegalArgumentException("default timeouts must be >= 0");
        }
        if (maxRequestBytes < 1024) {
            throw new IllegalArgumentException(MAX_REQUEST_BYTES + " must be >= 1024: " + maxRequestBytes);
        }
        if (maxTemplateFileBytes < 1024) {
            throw new IllegalArgumentException(MAX_TEMPLATE_FILE_BYTES + " must be >= 1024: " + maxTemplateFileBytes);
        }
        if (maxConcurrentRequests < 1) {
            throw new IllegalArgumentException(MAX_CONCURRENT_REQUESTS + " must be >= 1: " + maxConcurrentRequests);
        }
    }

    /** Reads the environment (and the file it names in {@code AENV_CONFIG}); fails fast on any bad value. */
    public static ServerConfig load(Map<String, String> env) {
        Map<String, String> values = values(env);
        Path home = Path.of(values.getOrDefault(HOME, "/var/lib/agentenv"));
        return new ServerConfig(
                parseListen(values.getOrDefault(LISTEN, "0.0.0.0:3000")),
                home,
                values.getOrDefault(BACKEND, "container"),
                Optional.ofNullable(values.get(SANDBOX_DOMAIN)),
                Optional.ofNullable(values.get(API_KEY)),
                Duration.ofSeconds(parseInt(values, DEFAULT_TIMEOUT_V1, 15)),
                Duration.ofSeconds(parseInt(values, DEFAULT_TIMEOUT_V2, 300)),
                parseInt(values, MAX_REQUEST_BYTES, 1 << 20),
                parseInt(values, MAX_CONCURRENT_REQUESTS, 1024),
                Duration.ofSeconds(parseInt(values, SHUTDOWN_GRACE, 30)),
                backendSettings(values),
                Optional.ofNullable(values.get(CUSTOM_EXTENSION_URL)).map(ServerConfig::parseExtensionUrl),
                Duration.ofMillis(parseInt(values, CUSTOM_EXTENSION_TIMEOUT, 5000)),
                Duration.ofMillis(parseInt(values, METRICS_SAMPLE_INTERVAL, 5000)),
                parseOnOff(values, CONSOLE, true),
                Optional.ofNullable(values.get(IMAGES_DIR)).map(Path::of).orElse(home.resolve("images")),
                registries(values),
                parseLong(values, MAX_TEMPLATE_FILE_BYTES, 1L << 30),
                parseOnOff(values, TRUST_FORWARDED_HEADERS, false),
                new VolumeConfig(
                        parseInt(values, VOLUME_DEFAULT_MB, 1024),
                        parseInt(values, VOLUME_MAX_MB, 10240),
                        VolumeConfig.parseStorage(values.getOrDefault(VOLUME_STORAGE, "loop")),
                        Optional.ofNullable(values.get(VOLUME_SHARED_DIR)).map(Path::of)),
                ClusterConfig.from(values));
    }

    /** The settings in the environment and in the file it names ({@code AENV_CONFIG}); the environment wins. */
    static Map<String, String> values(Map<String, String> env) {
        requireNonNull(env, "env is null");
        Map<String, String> values = new HashMap<>();
        String file = env.get(CONFIG);
        if (file != null && !file.isBlank()) {
            values.putAll(readFile(Path.of(file)));
        }
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (isKnownKey(e.getKey()) && e.getValue() != null && !e.getValue().isBlank()) {
                values.put(e.getKey(), e.getValue().strip());
            }
        }
        return values;
    }

    private static RegistrySettings registries(Map<String, String> values) {
        try {
            return RegistrySettings.parse(
                    values.getOrDefault(IMAGES_MIRRORS, ""), values.getOrDefault(IMAGES_INSECURE, ""));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(IMAGES_MIRRORS + " or " + IMAGES_INSECURE + ": " + e.getMessage(), e);
        }
    }

    private static URI parseExtensionUrl(String value) {
        try {
            return new URI(value);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(CUSTOM_EXTENSION_URL + " is not a URL");
        }
    }

    /** The URL may carry credentials, so messages never repeat it. */
    private static void checkExtensionUrl(URI url) {
        String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
        if ((!scheme.equals("http") && !scheme.equals("https")) || url.getHost() == null) {
            throw new IllegalArgumentException(CUSTOM_EXTENSION_URL + " must be an absolute http:// or https:// URL");
        }
        if (url.getRawQuery() != null || url.getRawFragment() != null) {
            throw new IllegalArgumentException(CUSTOM_EXTENSION_URL + " must not have a query or fragment");
        }
    }

    /**
     * Every key a server (or a node) reads besides the backend's own {@code AENV_BACKEND_<KEY>} settings, sorted: what
     * a deployment may set (the deployment files' test checks them against this).
     */
    public static Set<String> knownKeys() {
        Set<String> keys = new TreeSet<>(KEYS);
        keys.add(CONFIG);
        return java.util.Collections.unmodifiableSet(keys);
    }

    private static boolean isKnownKey(String key) {
        return KEYS.contains(key)
                || (key.startsWith(BACKEND_SETTING_PREFIX) && key.length() > BACKEND_SETTING_PREFIX.length());
    }

    private static Map<String, String> backendSettings(Map<String, String> values) {
        Map<String, String> settings = new HashMap<>();
        values.forEach((key, value) -> {
            if (key.startsWith(BACKEND_SETTING_PREFIX)) {
                settings.put(key.substring(BACKEND_SETTING_PREFIX.length()).toLowerCase(Locale.ROOT), value);
            }
        });
        return settings;
    }

    private static Map<String, String> readFile(Path file) {
        Properties props = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read config file " + file + " (" + CONFIG + ")", e);
        }
        Map<String, String> values = new HashMap<>();
        Set<String> unknown = new TreeSet<>();
        for (String key : props.stringPropertyNames()) {
            if (!isKnownKey(key)) {
                unknown.add(key);
            } else if (!props.getProperty(key).isBlank()) {
                values.put(key, props.getProperty(key).strip());
            }
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException(
                    "unknown keys in " + file + ": " + unknown + "; known keys: " + new TreeSet<>(KEYS));
        }
        return values;
    }

    static InetSocketAddress parseListen(String value) {
        int colon = value.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException(LISTEN + " must be host:port: " + value);
        }
        String host = value.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(value.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(LISTEN + " has a bad port: " + value);
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(LISTEN + " port out of range: " + value);
        }
        return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
    }

    private static boolean parseOnOff(Map<String, String> values, String key, boolean defaultValue) {
        String v = values.get(key);
        if (v == null) {
            return defaultValue;
        }
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException(key + " must be on or off: " + v);
        };
    }

    static int parseInt(Map<String, String> values, String key, int defaultValue) {
        String v = values.get(key);
        if (v == null) {
            return defaultValue;
        }
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an integer: " + v);
        }
    }

    private static long parseLong(Map<String, String> values, String key, long defaultValue) {
        String v = values.get(key);
        if (v == null) {
            return defaultValue;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an integer: " + v);
        }
    }

    @Override
    public String toString() {
        return "ServerConfig[listen=" + listen + ", dataDir=" + dataDir + ", backend=" + backend
                + ", sandboxDomain=" + sandboxDomain.orElse("-") + ", apiKey="
                + (apiKey.isPresent() ? "<redacted>" : "<file>")
                + ", defaultTimeoutV1=" + defaultTimeoutV1 + ", defaultTimeoutV2=" + defaultTimeoutV2
                + ", maxRequestBytes=" + maxRequestBytes + ", maxConcurrentRequests=" + maxConcurrentRequests
                + ", shutdownGrace=" + shutdownGrace + ", backendSettings=" + new TreeSet<>(backendSettings.keySet())
                + ", customExtension="
                + customExtensionUrl
                        .map(u -> u.getScheme() + "://" + u.getHost() + (u.getPort() < 0 ? "" : ":" + u.getPort())
                                + " (path and credentials redacted)")
                        .orElse("-")
                + ", customExtensionTimeout=" + customExtensionTimeout
                + ", metricsSampleInterval=" + metricsSampleInterval + ", console=" + (console ? "on" : "off")
                + ", maxTemplateFileBytes=" + maxTemplateFileBytes
                + ", trustForwardedHeaders=" + trustForwardedHeaders + "]";
    }
}
