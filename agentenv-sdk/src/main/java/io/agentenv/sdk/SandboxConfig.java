package io.agentenv.sdk;

import io.agentenv.sdk.internal.Threads;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * Where the control plane and the sandboxes are, and how to reach them. Resolved like E2B's SDKs:
 *
 * <ul>
 *   <li>API key: {@link Builder#apiKey}, else {@code E2B_API_KEY} (sent as {@code X-API-KEY}).</li>
 *   <li>Debug mode: {@link Builder#debug}, else {@code E2B_DEBUG} equal to {@code true} (any case). In debug mode
 *       create, connect and kill make no API call, and envd is expected at {@code http://localhost:49983}.</li>
 *   <li>Domain: {@link Builder#domain}, else {@code E2B_DOMAIN}, else {@code e2b.app}.</li>
 *   <li>API URL: {@link Builder#apiUrl}, else {@code E2B_API_URL}, else {@code http://localhost:3000} in debug mode,
 *       else {@code https://api.<domain>}.</li>
 *   <li>Sandbox URL (envd and the other sandbox ports, routed by the {@code E2b-Sandbox-Id}/{@code E2b-Sandbox-Port}
 *       headers): {@link Builder#sandboxUrl}, else {@code E2B_SANDBOX_URL}; without it each sandbox is reached at
 *       {@code https://49983-<id>.<sandbox domain>} ({@code https://sandbox.<domain>} for E2B's own domains).
 *       One addition to E2B's rules: when the API URL is given as a plain {@code http://} URL and no sandbox URL is,
 *       sandboxes are reached through the API URL (this server serves its sandbox proxy on the API's port, and a
 *       derived {@code https://} sandbox URL could not work beside a plain-HTTP API anyway).</li>
 * </ul>
 *
 * For this server both URLs are the server's address, e.g. {@code E2B_API_URL=E2B_SANDBOX_URL=http://localhost:3000}.
 * Immutable and thread-safe; its {@link HttpClient} (HTTP/1.1, as envd's Connect streams need) is shared by every
 * sandbox made with it.
 */
public final class SandboxConfig {
    /** envd's port inside every sandbox. */
    public static final int ENVD_PORT = 49983;
    /** The default timeout of one request (for streams: until their first message). */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(60);

    private static final List<String> SHARED_HOST_DOMAINS = List.of("e2b.app", "e2b.dev", "e2b.pro", "e2b-staging.dev");

    private final Optional<String> apiKey;
    private final boolean debug;
    private final String domain;
    private final URI apiUrl;
    private final Optional<URI> sandboxUrl;
    private final Duration requestTimeout;
    private final int retries;
    private final Map<String, String> headers;
    private final HttpClient httpClient;
    private final Executor streamExecutor;

    private SandboxConfig(Builder b, Map<String, String> env) {
        this.apiKey = firstText(b.apiKey, env.get("E2B_API_KEY"));
        this.debug = b.debug != null
                ? b.debug
                : "true".equals(env.getOrDefault("E2B_DEBUG", "false").toLowerCase(Locale.ROOT));
        this.domain = firstText(b.domain, env.get("E2B_DOMAIN")).orElse("e2b.app");
        this.apiUrl = uri(
                firstText(b.apiUrl, env.get("E2B_API_URL"))
                        .orElse(debug ? "http://localhost:3000" : "https://api." + domain),
                "API URL");
        Optional<String> explicitApi = firstText(b.apiUrl, env.get("E2B_API_URL"));
        this.sandboxUrl = firstText(b.sandboxUrl, env.get("E2B_SANDBOX_URL"))
                .map(u -> uri(u, "sandbox URL"))
                .or(() -> !debug && explicitApi.isPresent() && "http".equalsIgnoreCase(apiUrl.getScheme())
                        ? Optional.of(apiUrl)
                        : Optional.empty());
        this.requestTimeout = b.requestTimeout;
        this.retries = b.retries;
        this.headers = Map.copyOf(b.headers);
        this.httpClient = b.httpClient != null
                ? b.httpClient
                : HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(10))
                        .followRedirects(HttpClient.Redirect.NORMAL)
                        .executor(Threads.shared())
                        .build();
        this.streamExecutor = b.streamExecutor != null ? b.streamExecutor : Threads.shared();
    }

    /** The configuration from the environment variables alone. */
    public static SandboxConfig fromEnvironment() {
        return builder().build();
    }

    /** A builder whose unset values come from the process's environment variables. */
    public static Builder builder() {
        return new Builder(System.getenv());
    }

    /** A builder whose unset values come from {@code environment} instead of the process's (for tests and tools). */
    public static Builder builder(Map<String, String> environment) {
        return new Builder(Map.copyOf(environment));
    }

    /** A builder holding this configuration's explicit values (the environment is not read again). */
    public Builder toBuilder() {
        Builder b = new Builder(Map.of());
        apiKey.ifPresent(b::apiKey);
        b.debug(debug)
                .domain(domain)
                .apiUrl(apiUrl.toString())
                .requestTimeout(requestTimeout)
                .retries(retries)
                .headers(headers)
                .httpClient(httpClient)
                .streamExecutor(streamExecutor);
        sandboxUrl.ifPresent(u -> b.sandboxUrl(u.toString()));
        return b;
    }

    /** The API key, if one is configured. */
    public Optional<String> apiKey() {
        return apiKey;
    }

    /** Whether debug mode is on. */
    public boolean debug() {
        return debug;
    }

    /** The domain sandboxes are reached under when the API names none. */
    public String domain() {
        return domain;
    }

    /** The control plane's base URL. */
    public URI apiUrl() {
        return apiUrl;
    }

    /** The one URL all sandboxes are reached at (routed by headers), if configured. */
    public Optional<URI> sandboxUrl() {
        return sandboxUrl;
    }

    /** The timeout of one request (for streams: until the first message). */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** How often a control-plane request answered 429 with {@code Retry-After} is retried. */
    public int retries() {
        return retries;
    }

    /** Extra headers sent to the control plane (never to sandboxes). */
    public Map<String, String> headers() {
        return headers;
    }

    /** The HTTP client every request goes through. */
    public HttpClient httpClient() {
        return httpClient;
    }

    /** Runs the readers of background commands, PTYs and watches (virtual threads where the JDK has them). */
    public Executor streamExecutor() {
        return streamExecutor;
    }

    /**
     * envd's base URL for a sandbox: the sandbox URL, else {@code http://localhost:49983} in debug mode, else
     * {@code https://sandbox.<domain>} for E2B's domains, else {@code https://49983-<id>.<domain>}.
     *
     * @param sandboxDomain the domain the API answered for the sandbox, if any
     */
    public URI envdUrl(String sandboxId, Optional<String> sandboxDomain) {
        if (sandboxUrl.isPresent()) {
            return sandboxUrl.get();
        }
        String d = sandboxDomain.filter(s -> !s.isEmpty()).orElse(domain);
        if (debug) {
            return URI.create("http://localhost:" + ENVD_PORT);
        }
        if (SHARED_HOST_DOMAINS.contains(d)) {
            return URI.create("https://sandbox." + d);
        }
        return URI.create("https://" + host(sandboxId, ENVD_PORT, d));
    }

    /** The URL of a sandbox port for links handed to others (signed file URLs): like {@link #envdUrl} without the shared host. */
    public URI directUrl(String sandboxId, int port, Optional<String> sandboxDomain) {
        if (sandboxUrl.isPresent()) {
            return sandboxUrl.get();
        }
        if (debug) {
            return URI.create("http://localhost:" + port);
        }
        return URI.create("https://"
                + host(sandboxId, port, sandboxDomain.filter(s -> !s.isEmpty()).orElse(domain)));
    }

    /** {@code <port>-<id>.<domain>}, or {@code localhost:<port>} in debug mode. */
    public String host(String sandboxId, int port, String sandboxDomain) {
        return debug ? "localhost:" + port : port + "-" + sandboxId + "." + sandboxDomain;
    }

    @Override
    public String toString() {
        return "SandboxConfig[apiUrl=" + apiUrl + ", sandboxUrl="
                + sandboxUrl.map(URI::toString).orElse("-") + ", domain=" + domain + ", debug=" + debug + ", apiKey="
                + (apiKey.isPresent() ? "<set>" : "<unset>") + "]";
    }

    private static Optional<String> firstText(String explicit, String fromEnv) {
        if (explicit != null && !explicit.isEmpty()) {
            return Optional.of(explicit);
        }
        return Optional.ofNullable(fromEnv).filter(s -> !s.isEmpty());
    }

    private static URI uri(String value, String what) {
        try {
            URI uri = URI.create(value);
            if (uri.getScheme() == null || uri.getHost() == null) {
                throw new InvalidArgumentException(what + " must be an absolute http(s) URL: " + value);
            }
            return uri;
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException(what + " is not a URL: " + value, 0, e);
        }
    }

    /** Builds a {@link SandboxConfig}; unset values come from the environment (see the class description). */
    public static final class Builder {
        private final Map<String, String> env;
        private String apiKey;
        private Boolean debug;
        private String domain;
        private String apiUrl;
        private String sandboxUrl;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private int retries = 3;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private HttpClient httpClient;
        private Executor streamExecutor;

        private Builder(Map<String, String> env) {
            this.env = env;
        }

        /** The API key (instead of {@code E2B_API_KEY}). */
        public Builder apiKey(String apiKey) {
            this.apiKey = apiKey;
            return this;
        }

        /** Debug mode on or off (instead of {@code E2B_DEBUG}). */
        public Builder debug(boolean debug) {
            this.debug = debug;
            return this;
        }

        /** The domain (instead of {@code E2B_DOMAIN}). */
        public Builder domain(String domain) {
            this.domain = domain;
            return this;
        }

        /** The control plane's URL (instead of {@code E2B_API_URL}). */
        public Builder apiUrl(String apiUrl) {
            this.apiUrl = apiUrl;
            return this;
        }

        /** The URL every sandbox is reached at (instead of {@code E2B_SANDBOX_URL}). */
        public Builder sandboxUrl(String sandboxUrl) {
            this.sandboxUrl = sandboxUrl;
            return this;
        }

        /** The timeout of one request; positive. */
        public Builder requestTimeout(Duration requestTimeout) {
            Objects.requireNonNull(requestTimeout, "requestTimeout");
            if (requestTimeout.isNegative() || requestTimeout.isZero()) {
                throw new InvalidArgumentException("requestTimeout must be positive: " + requestTimeout);
            }
            this.requestTimeout = requestTimeout;
            return this;
        }

        /** Retries of a request answered 429 with {@code Retry-After} (0..10, default 3). */
        public Builder retries(int retries) {
            if (retries < 0 || retries > 10) {
                throw new InvalidArgumentException("retries must be 0..10: " + retries);
            }
            this.retries = retries;
            return this;
        }

        /** An extra header for control-plane requests. */
        public Builder header(String name, String value) {
            headers.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Extra headers for control-plane requests. */
        public Builder headers(Map<String, String> headers) {
            headers.forEach(this::header);
            return this;
        }

        /** The HTTP client to use (it must speak HTTP/1.1 to plain-http servers, as envd's streams need). */
        public Builder httpClient(HttpClient httpClient) {
            this.httpClient = Objects.requireNonNull(httpClient, "httpClient");
            return this;
        }

        /** Where the readers of background streams run. */
        public Builder streamExecutor(Executor executor) {
            this.streamExecutor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** The configuration; throws {@link InvalidArgumentException} for a malformed URL. */
        public SandboxConfig build() {
            return new SandboxConfig(this, env);
        }
    }
}
