package io.agentenv.envd;

import io.agentenv.envd.connect.ConnectDispatch;
import io.agentenv.envd.connect.ConnectRouter;
import io.agentenv.envd.files.FilesEndpoints;
import io.agentenv.envd.filesystem.FilesystemRpc;
import io.agentenv.envd.filesystem.LocalFilesystem;
import io.agentenv.envd.filesystem.WatchHub;
import io.agentenv.envd.filesystem.Watchers;
import io.agentenv.envd.http.Access;
import io.agentenv.envd.http.EnvdHandler;
import io.agentenv.envd.http.EnvdServer;
import io.agentenv.envd.http.HttpRoutes;
import io.agentenv.envd.logs.JournalFile;
import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.logs.Logging;
import io.agentenv.envd.logs.LogsEndpoint;
import io.agentenv.envd.metrics.MetricsEndpoint;
import io.agentenv.envd.metrics.SandboxMetrics;
import io.agentenv.envd.process.ProcessService;
import io.agentenv.envd.session.Readiness;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.session.SessionEndpoints;
import io.agentenv.envd.users.Accounts;
import io.agentenv.envd.users.UserDirectory;
import io.agentenv.envd.warmup.DeferredSetUps;
import io.agentenv.envd.warmup.RequestPathWarmup;
import java.io.IOException;
import java.text.DecimalFormatSymbols;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** envd's composition root: the only place that wires services, routes and the server together. */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        long startNanos = System.nanoTime();
        if (Arrays.asList(args).contains("--help")) {
            System.out.print(EnvdConfig.USAGE);
            return;
        }
        EnvdServer.prepareInBackground();
        prepareWiringInBackground();
        EnvdConfig config;
        try {
            config = EnvdConfig.parse(args, System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        // Listens and wires at once: the JDK server starts on its own thread (its creation waits for the JDK's
        // LoggerFinder, which the background set-up above is looking for), while this one wires. A request
        // that arrives before the wiring is done waits for it (EnvdServer). Two slow one-time set-ups start in the
        // background a little after envd serves (see DeferredSetUps): the first RPC does what it needs of the first
        // itself if it
        // comes earlier, processes start through the JDK until the second is done, and GET /ready (for the host, which
        // checkpoints a template's envd only after it) answers once both are done.
        EnvdServer server = new EnvdServer(config.listen(), config.unixSocket(), Duration.ofSeconds(1));
        CompletableFuture<Long> listening = listenInBackground(server);
        Clock clock = Clock.systemUTC();
        CompletableFuture<Void> warmup = new CompletableFuture<>();
        LogJournal journal = new LogJournal(
                clock,
                config.journalBytes(),
                config.journalFile().flatMap(file -> JournalFile.open(file, config.journalBytes())));
        Logging.configure(journal, config.logLevel(), config.sandboxId());
        Logger log = LoggerFactory.getLogger(Main.class);

        Services services;
        try {
            services = wire(config, clock, journal, warmup);
        } catch (Throwable e) { // whatever it is: exit rather than serve half-wired
            log.atError().setCause(e).log("envd could not wire its services");
            System.exit(1);
            return;
        }
        long listeningNanos;
        try {
            listeningNanos = listening.join();
        } catch (CompletionException e) {
            log.atError()
                    .setCause(e.getCause())
                    .addKeyValue("port", config.listen().getPort())
                    .addKeyValue(
                            "unix_socket",
                            config.unixSocket().map(Object::toString).orElse(""))
                    .log("envd could not listen");
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(Thread.ofPlatform().name("envd-shutdown").unstarted(() -> {
                    log.atInfo().log("stopping");
                    services.processes().close();
                    try {
                        server.close();
                    } catch (Exception e) {
                        log.atWarn().setCause(e).log("server did not stop cleanly");
                    }
                    stopped.countDown();
                }));
        server.serve(services.handler());
        long servingNanos = System.nanoTime();
        DeferredSetUps.startInBackground(
                DeferredSetUps.AFTER_FIRST_REQUESTS, warmup, services.processes()::prepareInBackground);
        log.atInfo()
                .addKeyValue("port", server.tcpPort())
                .addKeyValue(
                        "unix_socket", config.unixSocket().map(Object::toString).orElse(""))
                .addKeyValue("user", config.defaultUser())
                .addKeyValue(
                        "listening_ms",
                        Duration.ofNanos(listeningNanos - startNanos).toMillis())
                .addKeyValue(
                        "serving_ms",
                        Duration.ofNanos(servingNanos - startNanos).toMillis())
                .addKeyValue(
                        "startup_ms",
                        Duration.ofNanos(System.nanoTime() - startNanos).toMillis())
                .log("envd listening");
        RequestPathWarmup.forSdk(
                        config.warmRequests(),
                        server.tcpPort(),
                        config.unixSocket(),
                        services.processes(),
                        journal,
                        services.session())
                .startInBackground(List.of(services.processes().prepared(), warmup), services.requestsWarmed());
        stopped.await();
    }

    /**
     * Starts, on a background thread, the JDK's one-time set-up that the wiring needs first and that does not depend on
     * envd: the default locale's number symbols (locale provider and CLDR data: ~5-10 ms of CPU), which protobuf's
     * {@code RuntimeVersion} loads through {@code String.format} when the first generated message class initialises. It
     * runs on the second core while this thread parses its options, listens and sets up logging; if the wiring gets there
     * first it just waits for (or does) the class initialisation itself.
     */
    private static void prepareWiringInBackground() {
        Thread.ofPlatform()
                .name("envd-wiring-warmup")
                .daemon()
                .start(() -> DecimalFormatSymbols.getInstance(Locale.getDefault(Locale.Category.FORMAT)));
    }

    /** Starts {@code server} on a new platform thread; completes with the {@link System#nanoTime} it listened at. */
    private static CompletableFuture<Long> listenInBackground(EnvdServer server) {
        CompletableFuture<Long> listening = new CompletableFuture<>();
        Thread.ofPlatform().name("envd-listen").start(() -> {
            try {
                server.start();
                listening.complete(System.nanoTime());
            } catch (IOException | RuntimeException e) {
                listening.completeExceptionally(e);
            }
        });
        return listening;
    }

    /**
     * What the shutdown hook needs besides the server, the handler that serves every request, and what completes the
     * request warm-up ({@code --warm-requests}; GET /ready waits for it).
     */
    private record Services(
            ProcessService processes, EnvdHandler handler, CompletableFuture<Void> requestsWarmed, Session session) {}

    private static Services wire(EnvdConfig config, Clock clock, LogJournal journal, CompletableFuture<Void> warmup)
            throws IOException {
        Session session = new Session(clock);
        Accounts accounts = new Accounts(UserDirectory.system(), session::defaultUser, config.defaultUser());
        ProcessService processes = ProcessService.create(
                accounts,
                session,
                journal,
                clock,
                config.exitedRetention(),
                config.processPath(),
                config.fallbackShell());

        ConnectRouter rpcs = new ConnectRouter();
        HttpRoutes routes = new HttpRoutes();
        processes.register(rpcs);
        new SessionEndpoints(session, journal::prepareFile).register(routes);
        routes.add("GET", "/logs", Access.TOKEN, new LogsEndpoint(journal));
        WatchHub watchHub = new WatchHub();
        new FilesystemRpc(new LocalFilesystem(), watchHub, new Watchers(watchHub, 100, 10_000), accounts, session)
                .register(rpcs);
        new FilesEndpoints(new LocalFilesystem(), accounts, session, clock).register(routes);
        new MetricsEndpoint(SandboxMetrics.system(clock)).register(routes);
        CompletableFuture<Void> requestsWarmed = new CompletableFuture<>();
        new Readiness(List.of(processes.prepared(), warmup, requestsWarmed), session, Duration.ofSeconds(2))
                .register(routes);
        return new Services(
                processes, new EnvdHandler(routes, rpcs, new ConnectDispatch(clock), session), requestsWarmed, session);
    }
}
