package io.agentenv.store.postgres;

import static java.util.Objects.requireNonNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A private PostgreSQL 15 server for tests: {@code initdb} into a fresh temporary directory, started on 127.0.0.1 on a
 * free port (its unix socket in that directory), with a fresh database per caller ({@link #newDatabase()}). Tests
 * share one server per JVM ({@link #shared()}, started on first use and stopped, its directory deleted, by a shutdown
 * hook); a test that stops and starts its server takes a server of its own ({@link #launch()}) and closes it.
 *
 * <p>PostgreSQL refuses to run as root: as root the server's files belong to, and its programs run as, the
 * {@code postgres} user ({@code runuser}). Without PostgreSQL 15's programs ({@code /usr/lib/postgresql/15/bin},
 * Debian's {@code postgresql} package, which {@code scripts/test.sh} installs) a test is skipped with the reason, or
 * fails when {@code AENV_REQUIRE_HOST_TESTS=1}.
 */
public final class PostgresServer implements AutoCloseable {
    /** Where Debian's PostgreSQL 15 keeps its server programs. */
    public static final Path BIN = Path.of("/usr/lib/postgresql/15/bin");

    private static final String SYSTEM_USER = "postgres";
    private static final String USER = "agentenv";
    private static final String PASSWORD = "agentenv-test";
    private static final long COMMAND_SECONDS = 120;
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static PostgresServer shared;

    private final Path dir;
    private final Path data;
    private final boolean root;
    private int port;
    private boolean running;
    private boolean closed;

    private PostgresServer(Path dir, boolean root) {
        this.dir = dir;
        this.data = dir.resolve("data");
        this.root = root;
    }

    /** The JVM's server, started on the first call; skips (or fails) the calling test without PostgreSQL. */
    public static synchronized PostgresServer shared() {
        if (shared == null) {
            PostgresServer server = launch();
            Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(server::close));
            shared = server;
        }
        return shared;
    }

    /** A server of the caller's own, started; the caller closes it. Skips (or fails) the test without PostgreSQL. */
    public static PostgresServer launch() {
        boolean root = isRoot();
        unavailable(root).ifPresent(reason -> {
            if ("1".equals(System.getenv("AENV_REQUIRE_HOST_TESTS"))) {
                fail("host tests are required but " + reason);
            }
            Assumptions.abort("PostgreSQL test skipped: " + reason);
        });
        Path dir;
        try {
            dir = Files.createTempDirectory("aenv-postgres-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the PostgreSQL test directory", e);
        }
        PostgresServer server = new PostgresServer(dir, root);
        try {
            server.initdb();
            server.startOnFreePort();
            return server;
        } catch (RuntimeException | Error e) {
            try {
                server.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** Why the server cannot run here; empty when it can. */
    public static Optional<String> unavailable() {
        return unavailable(isRoot());
    }

    private static Optional<String> unavailable(boolean root) {
        for (String program : List.of("initdb", "pg_ctl", "postgres")) {
            if (!Files.isExecutable(BIN.resolve(program))) {
                return Optional.of(BIN.resolve(program)
                        + " is missing (Debian's postgresql package; scripts/test.sh installs it)");
            }
        }
        if (root) {
            if (!Files.isExecutable(Path.of("/usr/sbin/runuser"))) {
                return Optional.of("/usr/sbin/runuser is missing (PostgreSQL does not run as root)");
            }
            try {
                Path.of("/").getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(SYSTEM_USER);
            } catch (IOException e) {
                return Optional.of(
                        "there is no " + SYSTEM_USER + " user to run PostgreSQL as (it does not run as root)");
            }
        }
        return Optional.empty();
    }

    private static boolean isRoot() {
        try {
            return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot tell which user this is", e);
        }
    }

    /** A database of its own, empty (the store migrates it when it opens); close it to drop it. */
    public synchronized TestDatabase newDatabase() {
        checkRunning();
        String name = "test_" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet();
        admin("CREATE DATABASE " + name);
        return new TestDatabase(this, name);
    }

    /** Stops the server (fast shutdown: sessions are ended) until {@link #start()}; the data stays. */
    public synchronized void stop() {
        checkRunning();
        pgCtl("stop", "-m", "fast");
        running = false;
    }

    /** Starts a stopped server again on the same port. */
    public synchronized void start() {
        if (closed || running) {
            throw new IllegalStateException("the server is " + (closed ? "closed" : "running"));
        }
        pgCtl("start", "-l", dir.resolve("postgres.log").toString(), "-o", "-p " + port);
        running = true;
    }

    /** {@code pg_ctl restart}: ends every session and comes back on the same port. */
    public synchronized void restart() {
        checkRunning();
        pgCtl("restart", "-m", "fast", "-l", dir.resolve("postgres.log").toString());
    }

    /** The server's TCP port on 127.0.0.1. */
    public synchronized int port() {
        return port;
    }

    /** The role tests log in as (a superuser of this server only). */
    public String user() {
        return USER;
    }

    public String password() {
        return PASSWORD;
    }

    /** The JDBC URL of {@code database} on this server. */
    public synchronized String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
    }

    /** Stops the server if it runs and deletes its directory. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        if (running) {
            try {
                pgCtl("stop", "-m", "immediate");
                running = false;
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        try {
            deleteTree(dir);
        } catch (UncheckedIOException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void initdb() {
        try {
            Path passwordFile = dir.resolve("password");
            Files.writeString(passwordFile, PASSWORD + "\n", StandardCharsets.UTF_8);
            if (root) {
                UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
                GroupPrincipal group = users.lookupPrincipalByGroupName(SYSTEM_USER);
                for (Path path : List.of(dir, passwordFile)) {
                    Files.setOwner(path, users.lookupPrincipalByName(SYSTEM_USER));
                    Files.getFileAttributeView(path, PosixFileAttributeView.class)
                            .setGroup(group);
                }
            }
            run(
                    BIN.resolve("initdb").toString(),
                    "-D",
                    data.toString(),
                    "-U",
                    USER,
                    "--pwfile=" + passwordFile,
                    "--auth=scram-sha-256",
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "--no-sync");
            // the test server's settings: loopback only, its socket in its own directory, no fsync (test data)
            Files.writeString(
                    data.resolve("postgresql.conf"),
                    "\nlisten_addresses = '127.0.0.1'\n"
                            + "unix_socket_directories = '" + dir + "'\n"
                            + "fsync = off\n"
                            + "full_page_writes = off\n"
                            + "max_connections = 200\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot set up the PostgreSQL test directory " + dir, e);
        }
    }

    /** Starts on a port that was free a moment ago; another process may take it first, so a few tries. */
    private void startOnFreePort() {
        IllegalStateException failure = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            port = freePort();
            try {
                start();
                return;
            } catch (IllegalStateException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        throw failure;
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port for PostgreSQL", e);
        }
    }

    private void checkRunning() {
        if (closed || !running) {
            throw new IllegalStateException("the PostgreSQL test server is not running");
        }
    }

    private void pgCtl(String action, String... options) {
        List<String> command = new ArrayList<>(
                List.of(BIN.resolve("pg_ctl").toString(), action, "-D", data.toString(), "-w", "-t", "60"));
        command.addAll(List.of(options));
        run(command.toArray(String[]::new));
    }

    /** Runs a PostgreSQL program (as the postgres user when this is root); its output goes to a log in the directory. */
    private void run(String... program) {
        List<String> command = new ArrayList<>();
        if (root) {
            command.addAll(List.of("/usr/sbin/runuser", "-u", SYSTEM_USER, "--"));
        }
        command.addAll(List.of(program));
        Path output = dir.resolve("commands.log");
        try {
            Process process = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()))
                    .start();
            if (!process.waitFor(COMMAND_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", command) + " did not finish in " + COMMAND_SECONDS + " s" + logs(output));
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(
                        String.join(" ", command) + " exited with " + process.exitValue() + logs(output));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command.getFirst(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", command), e);
        }
    }

    /** The ends of the commands' and the server's logs, for a failure's message. */
    private String logs(Path commands) {
        StringBuilder text = new StringBuilder();
        for (Path log : List.of(commands, dir.resolve("postgres.log"))) {
            try {
                List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                text.append("\n--- ")
                        .append(log.getFileName())
                        .append(":\n")
                        .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())));
            } catch (IOException e) {
                text.append("\n--- ")
                        .append(log.getFileName())
                        .append(": unreadable (")
                        .append(e)
                        .append(')');
            }
        }
        return text.toString();
    }

    private void admin(String sql) {
        try (Connection connection = DriverManager.getConnection(jdbcUrl("postgres"), USER, PASSWORD);
                Statement st = connection.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("the PostgreSQL test server refused: " + sql, e);
        }
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the PostgreSQL test directory " + root, e);
        }
    }

    /** A database of a test server: its JDBC URL and credentials; closing it drops it. */
    public static final class TestDatabase implements AutoCloseable {
        private final PostgresServer server;
        private final String name;
        private boolean dropped;

        private TestDatabase(PostgresServer server, String name) {
            this.server = requireNonNull(server, "server is null");
            this.name = requireNonNull(name, "name is null");
        }

        public String name() {
            return name;
        }

        public String jdbcUrl() {
            return server.jdbcUrl(name);
        }

        public String user() {
            return server.user();
        }

        public String password() {
            return server.password();
        }

        /** The store's database on it, with the default settings (the schema migrated). */
        public PostgresDatabase open() {
            return PostgresDatabase.open(jdbcUrl(), user(), password());
        }

        /** Drops the database, ending its sessions. */
        @Override
        public void close() {
            synchronized (server) {
                if (dropped || server.closed || !server.running) {
                    return; // nothing left to drop
                }
                dropped = true;
                server.admin("DROP DATABASE " + name + " WITH (FORCE)");
            }
        }
    }
}
