package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.ClusterCensus;
import io.agentenv.cluster.NodeRegistry;
import io.agentenv.cluster.SandboxOwners;
import java.time.Clock;
import java.time.Duration;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.VirtualThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gateway: one endpoint for the whole cluster. It keeps no state of its own (the nodes, the sandboxes' owners and
 * what was lost are read from the cluster's database), so any number run side by side behind a load balancer and a
 * restart loses nothing. See docs/cluster.md.
 */
public final class Gateway implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Gateway.class);

    private final Server server;
    private final ServerConnector connector;
    private final ClusterView cluster;

    private Gateway(Server server, ServerConnector connector, ClusterView cluster) {
        this.server = server;
        this.connector = connector;
        this.cluster = cluster;
    }

    /** Starts serving on {@code settings.listen()}. */
    public static Gateway start(
            GatewaySettings settings, NodeRegistry registry, ClusterCensus census, SandboxOwners owners, Clock clock)
            throws Exception {
        requireNonNull(settings, "settings is null");
        requireNonNull(registry, "registry is null");
        requireNonNull(census, "census is null");
        requireNonNull(owners, "owners is null");
        requireNonNull(clock, "clock is null");
        ClusterView cluster = new ClusterView(registry, clock, settings.nodeRefresh());
        try {
            VirtualThreadPool threads = new VirtualThreadPool();
            threads.setName("aenv-gateway");
            threads.setMaxConcurrentTasks(settings.maxConcurrentRequests());
            Server server = new Server(threads);
            HttpConfiguration http = new HttpConfiguration();
            http.setSendServerVersion(false);
            http.setSendDateHeader(false); // the node's Date travels
            ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
            connector.setHost(settings.listen().getHostString());
            connector.setPort(settings.listen().getPort());
            connector.setIdleTimeout(Duration.ofMinutes(10).toMillis());
            server.addConnector(connector);

            OwnerCache ownerCache = new OwnerCache(owners, clock, settings.ownerTtl());
            GatewayMetrics metrics = new GatewayMetrics(census, cluster);
            NodeForwarder forwarder = new NodeForwarder(
                    settings.connectTimeout(),
                    request -> {
                        if (request.getAttribute(GatewayHandler.SANDBOX_ATTRIBUTE) instanceof String sandboxId) {
                            ownerCache.forget(sandboxId);
                        }
                    },
                    metrics);
            GatewayWebSockets webSockets =
                    new GatewayWebSockets(settings.connectTimeout(), settings.requestTimeout(), Duration.ofMinutes(10));
            Placement placement = new Placement(cluster);
            GatewayHandler handler = new GatewayHandler(
                    new GatewayRoutes(settings.sandboxDomains()),
                    cluster,
                    ownerCache,
                    owners,
                    placement,
                    forwarder,
                    webSockets,
                    new CreatePlacer(
                            placement,
                            cluster,
                            forwarder::getHttpClient,
                            settings.maxCreateBytes(),
                            settings.requestTimeout(),
                            ownerCache,
                            metrics),
                    new NodeEndpoints(registry, cluster),
                    settings.apiKey(),
                    metrics,
                    new SandboxMetricsFanOut(
                            owners, cluster, forwarder::getHttpClient, settings.requestTimeout(), metrics));
            handler.addBean(forwarder, true);
            handler.addBean(webSockets, true);
            server.setHandler(handler);
            server.start();
            Gateway gateway = new Gateway(server, connector, cluster);
            log.atInfo()
                    .addKeyValue("address", settings.listen().getHostString())
                    .addKeyValue("port", gateway.port())
                    .addKeyValue("nodes", cluster.nodes().size())
                    .log("agentenv gateway listening");
            return gateway;
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
    }

    /** The port it listens on (the chosen one when asked for port 0). */
    public int port() {
        return connector.getLocalPort();
    }

    @Override
    public void close() throws Exception {
        try {
            server.stop();
        } finally {
            cluster.close();
        }
    }
}
