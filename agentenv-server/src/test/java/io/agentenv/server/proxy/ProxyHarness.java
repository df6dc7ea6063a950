package io.agentenv.server.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.backend.mock.MockBackendFactory;
import io.agentenv.orchestrator.GuestSettings;
import io.agentenv.orchestrator.ImageSource;
import io.agentenv.orchestrator.LifecycleHooks;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.OrchestratorSettings;
import io.agentenv.orchestrator.SandboxGuests;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.TemplateBuilder;
import io.agentenv.server.api.ApiServer;
import io.agentenv.server.config.ServerConfig;
import io.agentenv.server.credentials.ApiKey;
import io.agentenv.server.credentials.SandboxTokens;
import io.agentenv.server.templates.TemplateFileStore;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.store.sqlite.SqliteSandboxStore;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.client.WWWAuthenticationProtocolHandler;
import org.eclipse.jetty.http.HttpMethod;

/**
 * The server as Main wires it (SQLite store, orchestrator over the mock backend, the proxy in front of the REST API
 * on one ephemeral port), with every sandbox's guest endpoint pointing at a {@link FakeUpstream}, and a Jetty client.
 */
final class ProxyHarness implements AutoCloseable {
    static final String KEY = "e2b_0123456789abcdef0123456789abcdef01234567";
    static final String DOMAIN = "sbx.test";

    final MockBackendFactory backend = new MockBackendFactory();
    final FakeUpstream upstream = new FakeUpstream();
    final SandboxStore store;
    final Orchestrator orchestrator;
    final SandboxTokens tokens;
    final SandboxProxy proxy;
    final ApiServer api;
    final TemplateBuilder templates;
    final HttpClient http = new HttpClient();
    final java.net.http.HttpClient jdk = java.net.http.HttpClient.newBuilder()
            .connectTimeout(java.time.Duration.ofSeconds(5))
            .build();
    final ObjectMapper json = new ObjectMapper();
    final String base;

    ProxyHarness(Path dataDir) throws Exception {
        this(dataDir, ProxySettings.defaults(List.of(DOMAIN)));
    }

    ProxyHarness(Path dataDir, ProxySettings settings) throws Exception {
        this(dataDir, settings, orchestrator -> orchestrator::route);
    }

    /** With {@code routes} as the proxy's per-request lookup (built from the orchestrator). */
    ProxyHarness(
            Path dataDir,
            ProxySettings settings,
            java.util.function.Function<Orchestrator, SandboxTargets.Routes> routes)
            throws Exception {
        ServerConfig config = ServerConfig.load(Map.of(
                "AENV_LISTEN",
                "127.0.0.1:0",
                "AENV_HOME",
                dataDir.toString(),
                "AENV_BACKEND",
                "mock",
                "AENV_SANDBOX_DOMAIN",
                DOMAIN));
        backend.guestEndpoint(new GuestEndpoint("127.0.0.1", upstream.port(), Optional.empty()));
        SqliteSandboxStore sqlite = SqliteSandboxStore.open(dataDir.resolve("agentenv.db"));
        store = sqlite;
        tokens = new SandboxTokens(store.tokenSeed());
        orchestrator = new Orchestrator(
                store,
                backend,
                id -> new AccessToken(tokens.envdAccessToken(id.value())),
                Clock.systemUTC(),
                OrchestratorSettings.defaults(dataDir.resolve("artifacts")),
                List.of(),
                LifecycleHooks.none());
        orchestrator.start();
        proxy = new SandboxProxy(
                orchestrator, routes.apply(orchestrator), tokens, ApiKey.of(KEY), settings, Clock.systemUTC());
        orchestrator.subscribe(proxy);
        SandboxGuests guests = new SandboxGuests(orchestrator, GuestSettings.defaults(), Clock.systemUTC());
        TemplateFileStore files = new TemplateFileStore(dataDir.resolve("template-files"));
        templates = new TemplateBuilder(
                orchestrator,
                guests,
                sqlite.templateBuilds(),
                ImageSource.none(),
                files,
                OrchestratorSettings.DEFAULT_USER,
                Clock.systemUTC());
        api = ApiServer.start(
                config,
                orchestrator,
                guests,
                templates,
                files,
                io.agentenv.server.volumes.ServerVolumes.open(
                        config.volumes(),
                        config.backendSettings(),
                        dataDir,
                        sqlite.volumes(),
                        store.tokenSeed(),
                        io.agentenv.volumes.VolumeUsers.none(),
                        Clock.systemUTC()),
                ApiKey.of(KEY),
                tokens,
                Clock.systemUTC(),
                proxy::inFrontOf,
                io.agentenv.server.metrics.MetricsSource.NONE);
        base = "http://127.0.0.1:" + api.port();
        http.start();
        http.getProtocolHandlers().remove(WWWAuthenticationProtocolHandler.NAME); // the proxy's 401s carry no challenge
    }

    /** A request to the server at {@code path} with a 30 s bound. */
    Request request(String path) {
        return http.newRequest(base + path).timeout(30, TimeUnit.SECONDS);
    }

    /** A request routed by headers to {@code port} of {@code sandboxId}. */
    Request routed(String sandboxId, int port, String path) {
        return request(path)
                .headers(h -> h.put("E2b-Sandbox-Id", sandboxId).put("E2b-Sandbox-Port", String.valueOf(port)));
    }

    /** Creates a sandbox through the API (v2) with extra JSON fields and returns the response body. */
    JsonNode create(String extraFields) throws Exception {
        String body = "{\"templateID\":\"base\"" + (extraFields.isEmpty() ? "" : "," + extraFields) + "}";
        ContentResponse response = request("/v2/sandboxes")
                .method(HttpMethod.POST)
                .headers(h -> h.put("X-API-Key", KEY))
                .body(new StringRequestContent("application/json", body))
                .send();
        if (response.getStatus() != 201) {
            throw new AssertionError("create failed: " + response.getStatus() + " " + response.getContentAsString());
        }
        return json.readTree(response.getContentAsString());
    }

    String createId() throws Exception {
        return create("").get("sandboxID").asText();
    }

    @Override
    public void close() throws Exception {
        try {
            http.stop();
            jdk.shutdownNow();
            upstream.close();
            api.close();
            templates.close();
        } finally {
            try {
                orchestrator.shutdown();
            } finally {
                store.close();
            }
        }
    }
}
