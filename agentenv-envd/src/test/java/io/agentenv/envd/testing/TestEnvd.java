package io.agentenv.envd.testing;

import io.agentenv.envd.connect.ConnectDispatch;
import io.agentenv.envd.connect.ConnectRouter;
import io.agentenv.envd.http.EnvdHandler;
import io.agentenv.envd.http.EnvdServer;
import io.agentenv.envd.http.HttpRoutes;
import io.agentenv.envd.session.Session;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.function.BiConsumer;

/** An envd HTTP server on a free loopback port with whatever services a test registers. */
public final class TestEnvd implements AutoCloseable {
    private final EnvdServer server;
    private final Session session;
    private final ConnectTestClient client;

    private TestEnvd(EnvdServer server, Session session) {
        this.server = server;
        this.session = session;
        this.client = new ConnectTestClient(server.tcpPort());
    }

    public static TestEnvd start(
            Session session, Optional<Path> unixSocket, BiConsumer<ConnectRouter, HttpRoutes> services)
            throws Exception {
        ConnectRouter rpcs = new ConnectRouter();
        HttpRoutes routes = new HttpRoutes();
        services.accept(rpcs, routes);
        EnvdServer server = new EnvdServer(
                new InetSocketAddress("127.0.0.1", 0),
                unixSocket,
                new EnvdHandler(routes, rpcs, new ConnectDispatch(Clock.systemUTC()), session),
                Duration.ofMillis(200));
        server.start();
        return new TestEnvd(server, session);
    }

    public ConnectTestClient client() {
        return client;
    }

    public Session session() {
        return session;
    }

    public int port() {
        return server.tcpPort();
    }

    @Override
    public void close() throws Exception {
        server.close();
    }
}
