package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.SandboxVolumeUsage;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.SandboxGuests;
import io.agentenv.orchestrator.TemplateBuilder;
import io.agentenv.orchestrator.TemplateView;
import io.agentenv.orchestrator.VolumeAttachment;
import io.agentenv.server.config.ServerConfig;
import io.agentenv.server.console.ConsoleHandler;
import io.agentenv.server.credentials.ApiKey;
import io.agentenv.server.credentials.SandboxTokens;
import io.agentenv.server.metrics.MetricsSource;
import io.agentenv.server.metrics.PrometheusText;
import io.agentenv.server.templates.TemplateFileStore;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.volumes.VolumeException;
import io.agentenv.volumes.Volumes;
import io.agentenv.volumes.storage.VolumeStorage;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.eclipse.jetty.server.ForwardedRequestCustomizer;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * The E2B-compatible REST API on Jetty 12 (core handlers, no servlets). Requests run on virtual threads; how many run
 * at once is bounded by {@link ServerConfig#maxConcurrentRequests()}. {@link #close()} stops accepting, lets in-flight
 * requests finish (bounded by {@link ServerConfig#shutdownGrace()}) and releases the port.
 */
public final class ApiServer implements AutoCloseable {
    private final Server server;
    private final ServerConnector connector;

    /** A requested template's resources when it names none and there is no built-in base to copy them from. */
    private static final Resources DEFAULT_TEMPLATE_RESOURCES = new Resources(2, 512, 1024);

    /** The usage of each volume sandbox {@code id} mounts; a volume whose storage cannot answer is left out. */
    static List<SandboxVolumeUsage> volumeUsage(Orchestrator orchestrator, Volumes volumes, SandboxId id) {
        List<VolumeAttachment> mounted;
        try {
            mounted = orchestrator.get(id).volumes();
        } catch (AgentEnvException e) {
            return List.of(); // gone since its metrics were read
        }
        List<SandboxVolumeUsage> usage = new ArrayList<>();
        for (VolumeAttachment volume : mounted) {
            try {
                VolumeStorage.Usage now = volumes.usage(volume.volumeId());
                usage.add(new SandboxVolumeUsage(volume.name(), volume.path(), now.usedBytes(), now.totalBytes()));
            } catch (VolumeException e) {
                // deleted or not mounted here: nothing to report
            }
        }
        return usage;
    }

    private ApiServer(Server server, ServerConnector connector) {
        this.server = server;
        this.connector = connector;
    }

    /**
     * Builds the routes over {@code orchestrator}, {@code guests}, {@code templates}, {@code templateFiles} (the
     * uploads of the builds' COPY steps) and {@code volumes} and starts listening on
     * {@code config.listen()}, with {@code front} wrapping the API's handler on the same port (the sandbox proxy:
     * requests it does not claim reach the API) and {@code nodeMetrics} added to {@code GET /metrics} (a node of a
     * cluster: its identity and lease; {@link MetricsSource#NONE} for a lone server).
     */
    public static ApiServer start(
            ServerConfig config,
            Orchestrator orchestrator,
            SandboxGuests guests,
            TemplateBuilder templates,
            TemplateFileStore templateFiles,
            Volumes volumes,
            ApiKey apiKey,
            SandboxTokens tokens,
            Clock clock,
            UnaryOperator<Handler> front,
            MetricsSource nodeMetrics)
            throws Exception {
        requireNonNull(front, "front is null");
        requireNonNull(nodeMetrics, "nodeMetrics is null");
        requireNonNull(config, "config is null");
        requireNonNull(orchestrator, "orchestrator is null");
        requireNonNull(guests, "guests is null");
        requireNonNull(templates, "templates is null");
        requireNonNull(templateFiles, "templateFiles is null");
        requireNonNull(volumes, "volumes is null");
        requireNonNull(apiKey, "apiKey is null");
        requireNonNull(tokens, "tokens is null");
        requireNonNull(clock, "clock is null");

        VirtualThreadPool threads = new VirtualThreadPool();
        threads.setName("aenv-api");
        threads.setMaxConcurrentTasks(config.maxConcurrentRequests());
        Server server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendDateHeader(true);
        if (config.trustForwardedHeaders()) {
            http.addCustomizer(new ForwardedRequestCustomizer()); // the request's URI as the client used it
        }
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        InetSocketAddress listen = config.listen();
        connector.setHost(listen.getHostString());
        connector.setPort(listen.getPort());
        connector.setIdleTimeout(KeepAliveHint.CONNECTION_IDLE_TIMEOUT.toMillis());
        server.addConnector(connector);

        Json json = new Json();
        // the configured domain, else localhost with the port this server listens on: the SDK's getHost(port) is then
        // <port>-<id>.localhost:<port>, which the proxy routes and which resolves to loopback (RFC 6761)
        WireMapping wire = new WireMapping(
                tokens, () -> config.sandboxDomain().orElseGet(() -> "localhost:" + connector.getLocalPort()), clock);
        PrometheusMetrics metrics = new PrometheusMetrics(orchestrator, volumes, nodeMetrics);
        orchestrator.subscribe(metrics);
        Router router = new Router()
                .addPublic("GET", "/health", ex -> Reply.NO_CONTENT)
                .addPublic("GET", "/metrics", ex -> new Reply.Text(200, PrometheusText.CONTENT_TYPE, metrics.render()));
        new GuestEndpoints(guests, id -> volumeUsage(orchestrator, volumes, id))
                .register(router); // before SandboxEndpoints: /sandboxes/metrics is not an id
        new SandboxEndpoints(
                        orchestrator,
                        wire,
                        json,
                        new SandboxEndpoints.Defaults(
                                config.defaultTimeoutV1(),
                                config.defaultTimeoutV2(),
                                config.defaultTimeoutV2(),
                                config.defaultTimeoutV1(),
                                config.defaultTimeoutV1(),
                                config.defaultTimeoutV1()))
                .register(router);
        new ListEndpoints(orchestrator, wire, json).register(router);
        new TemplateEndpoints(orchestrator, templates.registry(), json).register(router);
        new HostEndpoints(orchestrator, metrics, config.backend(), clock).register(router);
        new TemplateBuildEndpoints(
                        templates,
                        json,
                        () -> orchestrator
                                .findTemplate(TemplateBuilder.BASE_TEMPLATE)
                                .map(TemplateView::resources)
                                .orElse(DEFAULT_TEMPLATE_RESOURCES))
                .register(router);
        new TemplateFileEndpoints(templates, templateFiles, config.maxTemplateFileBytes(), clock, new SecureRandom())
                .register(router);
        new VolumeEndpoints(volumes, json).register(router);
        new VolumeContentEndpoints(volumes, json).register(router);

        Handler api = new ApiHandler(router, apiKey, json, metrics, config.maxRequestBytes());
        if (config.console()) { // the web console's files under /console, in front of the API (AENV_CONSOLE)
            api = ConsoleHandler.inFrontOf(api);
        }
        server.setHandler(new GracefulHandler(new KeepAliveHint(front.apply(api))));
        server.setErrorHandler(new JsonErrorHandler(json));
        server.setStopTimeout(config.shutdownGrace().toMillis());
        server.setStopAtShutdown(false); // Main owns the shutdown order (API first, then the orchestrator)
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw e;
        }
        return new ApiServer(server, connector);
    }

    /** The bound port (useful with port 0). */
    public int port() {
        return connector.getLocalPort();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
