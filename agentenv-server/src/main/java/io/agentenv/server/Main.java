package io.agentenv.server;

import io.agentenv.cluster.SandboxOwners;
import io.agentenv.images.ImageStore;
import io.agentenv.orchestrator.GuestSettings;
import io.agentenv.orchestrator.LifecycleHooks;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.OrchestratorSettings;
import io.agentenv.orchestrator.SandboxGuests;
import io.agentenv.orchestrator.TemplateBuilder;
import io.agentenv.server.api.ApiServer;
import io.agentenv.server.cluster.ClusterNode;
import io.agentenv.server.cluster.NodeLoadProbe;
import io.agentenv.server.config.GatewayConfig;
import io.agentenv.server.config.ServerConfig;
import io.agentenv.server.credentials.ApiKey;
import io.agentenv.server.credentials.ApiKeyFile;
import io.agentenv.server.credentials.SandboxTokens;
import io.agentenv.server.extension.HttpLifecycleHooks;
import io.agentenv.server.gateway.Gateway;
import io.agentenv.server.gateway.GatewaySettings;
import io.agentenv.server.images.RegistryImages;
import io.agentenv.server.metrics.MetricsSource;
import io.agentenv.server.proxy.ProxySettings;
import io.agentenv.server.proxy.SandboxProxy;
import io.agentenv.server.templates.TemplateFileStore;
import io.agentenv.server.volumes.MountableVolumes;
import io.agentenv.server.volumes.ServerVolumes;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendContext;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdTokens;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SharedFiles;
import io.agentenv.store.jdbc.JdbcSandboxStore;
import io.agentenv.store.postgres.PostgresDatabase;
import io.agentenv.store.postgres.PostgresNodeRegistry;
import io.agentenv.store.postgres.PostgresSandboxOwners;
import io.agentenv.store.sqlite.SqliteSandboxStore;
import io.agentenv.volumes.Volumes;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: reads the configuration, loads the backend named by {@code AENV_BACKEND} from the runtime
 * classpath, opens the store, builds the orchestrator and the REST API, and serves until SIGTERM/SIGINT. Shutdown
 * order: stop accepting and finish in-flight requests, pause running sandboxes (orchestrator shutdown), close the
 * store. The only class that wires objects across packages.
 */
public final class Main {
    private static final Logger log = LoggerFactory.getLogger(Main.class);

    /** The one argument the jar takes: {@code java -jar agentenv-server.jar gateway} runs a gateway. */
    public static final String GATEWAY_COMMAND = "gateway";

    private Main() {}

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals(GATEWAY_COMMAND)) {
            gateway();
            return;
        }
        if (args.length > 0) {
            System.err.println("agentenv-server: unknown argument '" + args[0]
                    + "' (no argument: a server, or a node of a cluster; 'gateway': a cluster's gateway)");
            System.exit(2);
            return;
        }
        ServerConfig config;
        SandboxBackendFactory backend;
        try {
            config = ServerConfig.load(System.getenv());
            backend = loadBackend(config.backend());
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("agentenv-server: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            run(config, backend);
        } catch (Exception e) {
            log.atError().setCause(e).log("server failed to start");
            System.exit(1);
        }
    }

    /** {@code agentenv-server gateway}: one endpoint in front of a cluster's nodes, until SIGTERM/SIGINT. */
    private static void gateway() {
        GatewayConfig config;
        ApiKey apiKey;
        try {
            config = GatewayConfig.load(System.getenv());
            apiKey = ApiKey.of(config.apiKey());
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("agentenv-server gateway: " + e.getMessage());
            System.exit(2);
            return;
        }
        PostgresDatabase database = null;
        Gateway gateway = null;
        try {
            database = ClusterNode.open(config.database());
            SandboxOwners owners = new PostgresSandboxOwners(database);
            PostgresNodeRegistry registry = new PostgresNodeRegistry(database);
            gateway = Gateway.start(
                    GatewaySettings.defaults(
                            config.listen(),
                            apiKey,
                            config.sandboxDomain().stream().toList(),
                            config.maxConcurrentRequests()),
                    registry,
                    registry,
                    owners,
                    Clock.systemUTC());
        } catch (Exception e) {
            log.atError().setCause(e).log("gateway failed to start");
            closeGateway(gateway, database);
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Gateway serving = gateway;
        PostgresDatabase servingDatabase = database;
        Runtime.getRuntime()
                .addShutdownHook(Thread.ofPlatform().name("aenv-shutdown").unstarted(() -> {
                    closeGateway(serving, servingDatabase);
                    stopped.countDown();
                }));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeGateway(Gateway gateway, PostgresDatabase database) {
        if (gateway != null) {
            try {
                gateway.close();
            } catch (Exception e) {
                log.atWarn().setCause(e).log("stopping the gateway failed");
            }
        }
        if (database != null) {
            database.close();
        }
    }

    /** Finds the backend factory called {@code name}; the error names every backend on the classpath. */
    static SandboxBackendFactory loadBackend(String name) {
        List<SandboxBackendFactory> found = new ArrayList<>();
        ServiceLoader.load(SandboxBackendFactory.class).forEach(found::add);
        return found.stream().filter(f -> f.name().equals(name)).findFirst().orElseThrow(() -> {
            TreeSet<String> names = new TreeSet<>();
            found.forEach(f -> names.add(f.name()));
            return new IllegalStateException("no sandbox backend named '" + name + "' (AENV_BACKEND); available: "
                    + (names.isEmpty() ? "none (is the backend's jar on the classpath?)" : String.join(", ", names)));
        });
    }

    private static void run(ServerConfig config, SandboxBackendFactory backend) throws Exception {
        Path dataDir = prepareDataDir(config.dataDir());
        // alone: the SQLite file in the data dir; a node of a cluster: the cluster's database, written with this
        // node's registration
        Optional<ClusterNode> cluster =
                config.cluster().map(settings -> ClusterNode.join(settings, dataDir, Clock.systemUTC()));
        JdbcSandboxStore store =
                cluster.isPresent() ? cluster.get().store() : SqliteSandboxStore.open(dataDir.resolve("agentenv.db"));
        AutoCloseable storage = cluster.isPresent() ? cluster.get() : store;
        Orchestrator orchestrator = null;
        SandboxGuests guests = null;
        TemplateBuilder templates = null;
        ApiServer api = null;
        try {
            SandboxTokens tokens = new SandboxTokens(store.tokenSeed());
            EnvdTokens envdTokens = id -> new AccessToken(tokens.envdAccessToken(id.value()));
            initializeBackend(backend, dataDir, config, envdTokens, cluster.flatMap(ClusterNode::backendFiles));
            // volumes are mounted on the host before recovery starts sandboxes that mount them; a volume is in use
            // while any sandbox record (running, paused, being created) names it
            Volumes volumes = ServerVolumes.open(
                    config.volumes(),
                    config.backendSettings(),
                    dataDir,
                    store.volumes(),
                    store.tokenSeed(),
                    volumeId -> store.mounting(volumeId).stream()
                            .map(SandboxId::value)
                            .collect(Collectors.toCollection(TreeSet::new)),
                    Clock.systemUTC());
            volumes.start();
            OrchestratorSettings settings = OrchestratorSettings.defaults(dataDir.resolve("artifacts"));
            LifecycleHooks hooks = lifecycleHooks(config);
            orchestrator = new Orchestrator(
                    store,
                    backend,
                    envdTokens,
                    Clock.systemUTC(),
                    settings,
                    List.of(),
                    hooks,
                    new MountableVolumes(volumes),
                    cluster.flatMap(ClusterNode::sharedArtifacts));
            orchestrator.start();
            guests = new SandboxGuests(
                    orchestrator,
                    GuestSettings.defaults().withSampleInterval(config.metricsSampleInterval()),
                    Clock.systemUTC());
            guests.start();
            TemplateFileStore templateFiles = new TemplateFileStore(dataDir.resolve("template-files"));
            templates = new TemplateBuilder(
                    orchestrator,
                    guests,
                    store.templateBuilds(),
                    new RegistryImages(new ImageStore(config.imagesDir(), config.registries())),
                    templateFiles,
                    settings.defaultUser(),
                    Clock.systemUTC());
            templates.recover();

            ApiKeyFile.Resolved key = ApiKeyFile.resolve(config.apiKey(), dataDir, new SecureRandom());
            if (key.file().isPresent()) {
                log.atInfo()
                        .addKeyValue("path", key.file().get())
                        .addKeyValue("generated", key.generated())
                        .log("API key is read from a file (send it as X-API-Key)");
            } else {
                log.atInfo().log("API key is taken from AENV_API_KEY");
            }
            SandboxProxy proxy = new SandboxProxy(
                    orchestrator,
                    tokens,
                    key.key(),
                    ProxySettings.defaults(config.sandboxDomain().stream().toList()),
                    Clock.systemUTC());
            orchestrator.subscribe(proxy); // cuts a sandbox's proxied streams when it is paused or killed
            api = ApiServer.start(
                    config,
                    orchestrator,
                    guests,
                    templates,
                    templateFiles,
                    volumes,
                    key.key(),
                    tokens,
                    Clock.systemUTC(),
                    proxy::inFrontOf,
                    cluster.map(ClusterNode::metrics).orElse(MetricsSource.NONE));
            log.atInfo()
                    .addKeyValue("address", config.listen().getHostString())
                    .addKeyValue("port", api.port())
                    .addKeyValue("backend", backend.name())
                    .addKeyValue("data_dir", dataDir)
                    .addKeyValue("console", config.console() ? "/console/" : "off")
                    .addKeyValue(
                            "node",
                            config.cluster().map(c -> c.nodeId().value()).orElse("-"))
                    .log("agentenv server listening");
            if (cluster.isPresent()) {
                cluster.get()
                        .serve(
                                new NodeLoadProbe(
                                        orchestrator,
                                        settings.artifactRoot(),
                                        Path.of("/proc"),
                                        Clock.systemUTC(),
                                        Duration.ofSeconds(30),
                                        config.volumes().shared()),
                                ClusterNode.HALT,
                                hooks);
            }
        } catch (Exception | Error e) {
            closeQuietly(api, templates, guests, orchestrator, backend, storage);
            throw e;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        ApiServer servingApi = api;
        Orchestrator servingOrchestrator = orchestrator;
        SandboxGuests servingGuests = guests;
        TemplateBuilder servingTemplates = templates;
        Runtime.getRuntime()
                .addShutdownHook(Thread.ofPlatform().name("aenv-shutdown").unstarted(() -> {
                    log.atInfo().log("shutting down: finishing requests, pausing running sandboxes");
                    closeQuietly(servingApi, servingTemplates, servingGuests, servingOrchestrator, backend, storage);
                    log.atInfo().log("shutdown complete");
                    stopped.countDown();
                }));
        stopped.await();
    }

    /** The custom extension when AENV_CUSTOM_EXTENSION_URL is set: one HttpClient for every hook call. */
    private static LifecycleHooks lifecycleHooks(ServerConfig config) {
        if (config.customExtensionUrl().isEmpty()) {
            return LifecycleHooks.none();
        }
        HttpClient http = HttpClient.newBuilder()
                .connectTimeout(config.customExtensionTimeout())
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
        log.atInfo()
                .addKeyValue("timeout_ms", config.customExtensionTimeout().toMillis())
                .log("custom extension hooks enabled");
        return new HttpLifecycleHooks(http, config.customExtensionUrl().get(), config.customExtensionTimeout());
    }

    private static Path prepareDataDir(Path dataDir) throws IOException {
        if (!Files.isDirectory(dataDir)) {
            Files.createDirectories(
                    dataDir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        return dataDir;
    }

    /**
     * Gives the backend its own work directory, settings and the envd token derivation (for the ids it proposes), once,
     * before the orchestrator may call it.
     */
    private static void initializeBackend(
            SandboxBackendFactory backend,
            Path dataDir,
            ServerConfig config,
            EnvdTokens envdTokens,
            Optional<SharedFiles> sharedFiles)
            throws IOException, BackendException {
        Path workDir = Files.createDirectories(dataDir.resolve("backend").resolve(backend.name()));
        backend.initialize(new BackendContext(workDir, config.backendSettings(), Optional.of(envdTokens), sharedFiles));
    }

    /**
     * Stops in order (API, template builds, metrics sampler, orchestrator, which pauses running sandboxes, backend,
     * store, and in a cluster the node's lease renewals); a failure in one step is logged and does not skip the next.
     */
    private static void closeQuietly(
            ApiServer api,
            TemplateBuilder templates,
            SandboxGuests guests,
            Orchestrator orchestrator,
            SandboxBackendFactory backend,
            AutoCloseable store) {
        if (api != null) {
            try {
                api.close();
            } catch (Exception e) {
                log.atWarn().setCause(e).log("stopping the API failed");
            }
        }
        if (templates != null) {
            templates.close(); // running builds end; the next start's recovery marks them failed
        }
        if (guests != null) {
            guests.close(); // stops the metrics sampler before the orchestrator pauses everything
        }
        if (orchestrator != null) {
            try {
                orchestrator.shutdown();
            } catch (RuntimeException e) {
                log.atWarn().setCause(e).log("orchestrator shutdown failed");
            }
        }
        try {
            backend.shutdown();
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("backend shutdown failed");
        }
        try {
            store.close();
        } catch (Exception e) {
            log.atWarn().setCause(e).log("closing the store failed");
        }
    }
}
