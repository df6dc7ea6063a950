package io.agentenv.envd;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.process.ProcessService;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.slf4j.event.Level;

/**
 * envd's start-up settings, read once from the command line (and {@code ENVD_*} variables as defaults).
 *
 * @param defaultUser    the user processes run as when neither the request nor /init names one
 * @param journalBytes   memory budget of the log journal served by {@code GET /logs}
 * @param journalFile    where the journal's entries are also written as JSON lines (rotated at journalBytes), if anywhere
 * @param processPath    the PATH processes start with: envd's own, else Debian's default
 * @param warmRequests   rounds of requests envd sends itself before {@code GET /ready} answers
 *                       ({@link io.agentenv.envd.warmup.RequestPathWarmup}), 0 for none
 * @param fallbackShell  a POSIX shell used when a process asks for {@code /bin/bash} or {@code /bin/sh} and the system
 *                       has neither (an image without bash or without any shell)
 */
record EnvdConfig(
        InetSocketAddress listen,
        Optional<Path> unixSocket,
        String defaultUser,
        Duration exitedRetention,
        int journalBytes,
        Optional<Path> journalFile,
        Level logLevel,
        String sandboxId,
        String processPath,
        int warmRequests,
        Optional<Path> fallbackShell) {
    static final int DEFAULT_PORT = 49983;

    EnvdConfig {
        requireNonNull(listen, "listen is null");
        requireNonNull(unixSocket, "unixSocket is null");
        requireNonNull(defaultUser, "defaultUser is null");
        requireNonNull(exitedRetention, "exitedRetention is null");
        requireNonNull(journalFile, "journalFile is null");
        requireNonNull(logLevel, "logLevel is null");
        requireNonNull(sandboxId, "sandboxId is null");
        requireNonNull(processPath, "processPath is null");
        requireNonNull(fallbackShell, "fallbackShell is null");
        if (fallbackShell.isPresent() && !fallbackShell.get().isAbsolute()) {
            throw new IllegalArgumentException("--fallback-shell must be an absolute path: " + fallbackShell.get());
        }
        if (exitedRetention.isNegative()) {
            throw new IllegalArgumentException("exited retention must not be negative");
        }
        if (warmRequests < 0) {
            throw new IllegalArgumentException("warm requests must not be negative");
        }
        if (journalBytes < 1024) {
            throw new IllegalArgumentException("journal size must be at least 1024 bytes");
        }
        if (journalFile.isPresent() && !journalFile.get().isAbsolute()) {
            throw new IllegalArgumentException("--journal-file must be an absolute path: " + journalFile.get());
        }
    }

    static final String USAGE = """
            usage: java -jar agentenv-envd.jar [options]
              --port <n>              TCP port (default 49983, env ENVD_PORT; 0 = any free port)
              --host <addr>           bind address (default 0.0.0.0, env ENVD_HOST)
              --unix-socket <path>    also listen on this unix socket (env ENVD_UNIX_SOCKET)
              --default-user <name>   user for requests that name none (default: the user envd runs as)
              --exited-retention <s>  seconds an exited process stays visible to Connect (default 300)
              --journal-bytes <n>     memory for GET /logs (default 1048576)
              --journal-file <path>   also write the journal there as JSON lines, rotated to <path>.1 (default: none)
              --log-level <level>     TRACE, DEBUG, INFO, WARN, ERROR (default INFO, env ENVD_LOG_LEVEL)
              --sandbox-id <id>       sandbox id put on every log line (env ENVD_SANDBOX_ID)
              --warm-requests <n>     before GET /ready answers, send itself n rounds of a new sandbox's first requests
                                      and erase their traces (for a template's boot checkpoint; default 0)
              --fallback-shell <path> a POSIX shell for processes asking for /bin/bash or /bin/sh where the system has
                                      neither (default: none)
              --help                  print this and exit
            """;

    static EnvdConfig parse(String[] args, Map<String, String> env) {
        String host = env.getOrDefault("ENVD_HOST", "0.0.0.0");
        int port = integer("ENVD_PORT", env.getOrDefault("ENVD_PORT", String.valueOf(DEFAULT_PORT)), 0, 65535);
        Optional<Path> socket = Optional.ofNullable(env.get("ENVD_UNIX_SOCKET"))
                .filter(s -> !s.isEmpty())
                .map(Path::of);
        String user = processUser(System.getProperty("user.name", "?"), processUid());
        long retention = 300;
        int journal = 1 << 20;
        Optional<Path> journalFile = Optional.empty();
        Level level = level("ENVD_LOG_LEVEL", env.getOrDefault("ENVD_LOG_LEVEL", "INFO"));
        String sandboxId = env.getOrDefault("ENVD_SANDBOX_ID", "-");
        int warmRequests = 0;
        Optional<Path> fallbackShell = Optional.empty();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--port" -> port = integer(arg, value(args, ++i, arg), 0, 65535);
                case "--host" -> host = value(args, ++i, arg);
                case "--unix-socket" -> socket = Optional.of(Path.of(value(args, ++i, arg)));
                case "--default-user" -> user = value(args, ++i, arg);
                case "--exited-retention" -> retention = integer(arg, value(args, ++i, arg), 0, 86_400);
                case "--journal-bytes" -> journal = integer(arg, value(args, ++i, arg), 1024, 1 << 30);
                case "--journal-file" -> journalFile = Optional.of(Path.of(value(args, ++i, arg)));
                case "--log-level" -> level = level(arg, value(args, ++i, arg));
                case "--sandbox-id" -> sandboxId = value(args, ++i, arg);
                case "--warm-requests" -> warmRequests = integer(arg, value(args, ++i, arg), 0, 10_000);
                case "--fallback-shell" -> fallbackShell = Optional.of(Path.of(value(args, ++i, arg)));
                default -> throw new IllegalArgumentException("unknown option " + arg + "\n" + USAGE);
            }
        }
        return new EnvdConfig(
                new InetSocketAddress(host, port),
                socket,
                user,
                Duration.ofSeconds(retention),
                journal,
                journalFile,
                level,
                sandboxId,
                Optional.ofNullable(env.get("PATH")).filter(p -> !p.isBlank()).orElse(ProcessService.DEFAULT_PATH),
                warmRequests,
                fallbackShell);
    }

    /**
     * The user envd runs as, by name: the JDK's {@code user.name}, which is {@code ?} where the system has no account
     * file naming the process's uid (an image without {@code /etc/passwd}); uid 0 is root there too, which envd's user
     * directory knows without a file.
     */
    static String processUser(String userName, int uid) {
        return userName.equals("?") && uid == 0 ? "root" : userName;
    }

    private static int processUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException e) {
            return -1;
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value\n" + USAGE);
        }
        return args[i];
    }

    private static Level level(String option, String value) {
        try {
            return Level.valueOf(value.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + " must be one of TRACE, DEBUG, INFO, WARN, ERROR: " + value);
        }
    }

    private static int integer(String option, String value, int min, int max) {
        try {
            int n = Integer.parseInt(value);
            if (n < min || n > max) {
                throw new IllegalArgumentException(option + " must be between " + min + " and " + max + ": " + value);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " must be an integer: " + value);
        }
    }
}
