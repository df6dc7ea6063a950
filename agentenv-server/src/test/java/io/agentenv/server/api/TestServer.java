package io.agentenv.server.api;

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
import io.agentenv.server.cluster.ClusterNode;
import io.agentenv.server.cluster.NodeLoadProbe;
import io.agentenv.server.config.ServerConfig;
import io.agentenv.server.credentials.ApiKey;
import io.agentenv.server.credentials.SandboxTokens;
import io.agentenv.server.extension.HttpLifecycleHooks;
import io.agentenv.server.templates.TemplateFileStore;
import io.agentenv.spi.AccessToken;
import io.agentenv.store.jdbc.JdbcSandboxStore;
import io.agentenv.store.sqlite.SqliteSandboxStore;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/**
 * A real server for API tests: SQLite store in a temp dir, the real orchestrator over the scriptable mock backend,
 * and the REST API on an ephemeral port, driven with the JDK HttpClient.
 */
final class TestServer implements AutoCloseable {
    static final String KEY = "e2b_0123456789abcdef0123456789abcdef01234567";

    final MockBackendFactory backend = new MockBackendFactory();
    final SandboxStore store;
    /** Present when the environment makes this server a node of a cluster. */
    final Optional<ClusterNode> cluster;
    /** Counted down when the cluster refuses this node's lease (Main halts the process instead). */
    final CountDownLatch fenced = new CountDownLatch(1);

    final Orchestrator orchestrator;
    final SandboxTokens tokens;
    final ApiServer api;
    final SandboxGuests guests;
    final TemplateBuilder templates;
    final TemplateFileStore templateFiles;
    final io.agentenv.volumes.Volumes volumes;
    final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    final ObjectMapper json = new ObjectMapper();
    final URI base;

    TestServer(Path dataDir) throws Exception {
        this(dataDir, Map.of());
    }

    TestServer(Path dataDir, Map<String, String> extraEnv) throws Exception {
        Map<String, String> env = new java.util.HashMap<>(Map.of(
                "AENV_LISTEN",
                "127.0.0.1:0",
                "AENV_HOME",
                dataDir.toString(),
                "AENV_BACKEND",
                "mock",
                "AENV_MAX_REQUEST_BYTES",
                "65536"));
        env.putAll(extraEnv);
        ServerConfig config = ServerConfig.load(env);
        // as Main does: a node of a cluster keeps its records in the cluster's database
        cluster = config.cluster().map(settings -> ClusterNode.join(settings, dataDir, Clock.systemUTC()));
        JdbcSandboxStore sqlite =
                cluster.isPresent() ? cluster.get().store() : SqliteSandboxStore.open(dataDir.resolve("agentenv.db"));
        store = sqlite;
        tokens = new SandboxTokens(store.tokenSeed());
        // as Main does: the custom extension only when AENV_CUSTOM_EXTENSION_URL is set
        LifecycleHooks hooks = config.customExtensionUrl()
                .<LifecycleHooks>map(url -> new HttpLifecycleHooks(http, url, config.customExtensionTimeout()))
                .orElse(LifecycleHooks.none());
        // as Main does: volumes first, in use while a sandbox record names them
        volumes = io.agentenv.server.volumes.ServerVolumes.open(
                config.volumes(),
                config.backendSettings(),
                dataDir,
                sqlite.volumes(),
                store.tokenSeed(),
                volumeId -> new java.util.TreeSet<>(store.mounting(volumeId).stream()
                        .map(io.agentenv.spi.SandboxId::value)
                        .toList()),
                Clock.systemUTC());
        volumes.start();
        orchestrator = new Orchestrator(
                store,
                backend,
                id -> new AccessToken(tokens.envdAccessToken(id.value())),
                Clock.systemUTC(),
                OrchestratorSettings.defaults(dataDir.resolve("artifacts")),
                List.of(),
                hooks,
                new io.agentenv.server.volumes.MountableVolumes(volumes),
                cluster.flatMap(ClusterNode::sharedArtifacts));
        orchestrator.start();
        guests = new SandboxGuests(orchestrator, GuestSettings.defaults(), Clock.systemUTC());
        templateFiles = new TemplateFileStore(dataDir.resolve("template-files"));
        templates = new TemplateBuilder(
                orchestrator,
                guests,
                sqlite.templateBuilds(),
                ImageSource.none(),
                templateFiles,
                OrchestratorSettings.DEFAULT_USER,
                Clock.systemUTC());
        api = ApiServer.start(
                config,
                orchestrator,
                guests,
                templates,
                templateFiles,
                volumes,
                ApiKey.of(KEY),
                tokens,
                Clock.systemUTC(),
                h -> h,
                cluster.map(ClusterNode::metrics).orElse(io.agentenv.server.metrics.MetricsSource.NONE));
        base = URI.create("http://127.0.0.1:" + api.port());
        cluster.ifPresent(node -> node.serve(
                new NodeLoadProbe(
                        orchestrator,
                        dataDir.resolve("artifacts"),
                        Path.of("/proc"),
                        Clock.systemUTC(),
                        Duration.ofSeconds(30),
                        false),
                fenced::countDown,
                hooks));
    }

    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(30))
                .header("X-API-Key", KEY);
    }

    HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return send(request(path).GET().build());
    }

    HttpResponse<String> delete(String path) throws IOException, InterruptedException {
        return send(request(path).DELETE().build());
    }

    HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
        return send(request(path)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    HttpResponse<String> put(String path, String body) throws IOException, InterruptedException {
        return send(request(path)
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    HttpResponse<String> patch(String path, String body) throws IOException, InterruptedException {
        return send(request(path)
                .header("Content-Type", "application/json")
                .method("PATCH", HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    JsonNode parse(HttpResponse<String> response) throws IOException {
        return json.readTree(response.body());
    }

    /** Creates a sandbox through the API (v2) and returns its id. */
    String create(String body) throws Exception {
        HttpResponse<String> response = post("/v2/sandboxes", body);
        if (response.statusCode() != 201) {
            throw new AssertionError("create failed: " + response.statusCode() + " " + response.body());
        }
        return parse(response).get("sandboxID").asText();
    }

    String create() throws Exception {
        return create("{\"templateID\":\"base\"}");
    }

    @Override
    public void close() throws Exception {
        http.shutdownNow(); // idle keep-alive connections would otherwise hold up the server's graceful stop
        try {
            api.close();
            templates.close();
        } finally {
            try {
                orchestrator.shutdown();
            } finally {
                if (cluster.isPresent()) {
                    cluster.get().close();
                } else {
                    store.close();
                }
            }
        }
    }
}
