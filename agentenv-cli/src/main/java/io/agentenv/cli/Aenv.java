package io.agentenv.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.spi.EnvdException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * {@code aenv}: drives the control plane's REST API, and through the server's sandbox proxy the sandbox's envd
 * ({@code exec}, {@code files}). The server URL and key come from {@code --api-url}/{@code --api-key} or
 * {@code AENV_API_URL}/{@code AENV_API_KEY}, else from what {@code aenv auth login} saved (default URL
 * {@code http://localhost:3000}). Output is a table, or the wire
 * JSON with {@code --output json}. Exit codes: 0 success, 1 the server refused or was unreachable, 2 bad usage;
 * {@code exec} exits with the command's code.
 */
@Command(
        name = "aenv",
        mixinStandardHelpOptions = true,
        version = "aenv 0.1.0",
        description = "Manage AgentENV sandboxes through the E2B-compatible REST API.",
        footer = {
            "",
            "Exit codes: 0 success; 1 the server refused (its reason is printed) or was",
            "unreachable; 2 bad usage. exec exits with the command's exit code.",
            "'aenv COMMAND --help' describes a command."
        })
public final class Aenv {
    static final String DEFAULT_URL = "http://localhost:3000";

    /**
     * The commands, in the order {@code aenv --help} lists them. They are not the root's annotated subcommands: picocli
     * would then build the model of every one (reflection over each class's options, most of aenv's start-up) where a
     * command line runs one. {@link #commandLine} adds the one the line names, or all of them when it names none or one
     * that describes the others ({@code help}, {@code completion}).
     */
    static final List<Class<?>> COMMANDS = List.of(
            SandboxCommands.Create.class,
            SandboxCommands.ListSandboxes.class,
            SandboxCommands.Info.class,
            SandboxCommands.Kill.class,
            SandboxCommands.Pause.class,
            SandboxCommands.Connect.class,
            SandboxCommands.SetTimeout.class,
            SandboxCommands.Fork.class,
            SandboxCommands.Snapshot.class,
            SandboxCommands.Snapshots.class,
            ExecCommand.class,
            StartCommand.class,
            FilesCommands.class,
            VolumeCommand.class,
            LogsCommand.class,
            MetricsCommand.class,
            NetworkCommand.class,
            TemplatesCommand.class,
            TemplateCommand.class,
            PullCommand.class,
            NodeCommand.class,
            AuthCommand.class,
            CompletionCommand.class,
            CommandLine.HelpCommand.class);

    /** Commands whose work is to describe the others: they need the whole tree. */
    private static final Set<Class<?>> DESCRIBING = Set.of(CompletionCommand.class, CommandLine.HelpCommand.class);

    enum Output {
        table,
        json
    }

    @Option(
            names = "--api-url",
            scope = ScopeType.INHERIT,
            paramLabel = "URL",
            description = "Control-plane URL (default: $AENV_API_URL, else the saved one, else " + DEFAULT_URL + ").")
    private String apiUrl;

    @Option(
            names = "--api-key",
            scope = ScopeType.INHERIT,
            paramLabel = "KEY",
            description = "API key (default: $AENV_API_KEY, else the one 'aenv auth login' saved).")
    private String apiKey;

    @Option(
            names = {"-o", "--output"},
            scope = ScopeType.INHERIT,
            paramLabel = "FORMAT",
            description = "table or json (default: table).")
    private Output output = Output.table;

    private final Map<String, String> env;
    private final Stdio stdio;
    private final PrintWriter out;
    private final PrintWriter err;
    private final Consumer<Runnable> interrupts;
    private UserConfig userConfig;

    /**
     * @param interrupts registers what to do on Ctrl-C (the JVM's shutdown hook in {@link #main}; a test calls it)
     */
    Aenv(Map<String, String> env, Stdio stdio, Consumer<Runnable> interrupts) {
        this.env = Map.copyOf(env);
        this.stdio = stdio;
        this.out = stdio.outWriter();
        this.err = stdio.errWriter();
        this.interrupts = interrupts;
    }

    public static void main(String[] args) {
        // SIGINT runs the shutdown hooks (exec's registers one that signals the remote command), then the JVM exits 130
        Consumer<Runnable> shutdownHooks =
                hook -> Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(hook));
        System.exit(run(args, System.getenv(), Stdio.system(), shutdownHooks));
    }

    /** Runs one command line; returns the exit code. */
    static int run(String[] args, Map<String, String> env, Stdio stdio, Consumer<Runnable> interrupts) {
        Aenv aenv = new Aenv(env, stdio, interrupts);
        PrintWriter err = aenv.err;
        CommandLine cli = commandLine(aenv, args);
        cli.setOut(aenv.out);
        cli.setErr(err);
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            int code = switch (e) {
                case ApiException api -> {
                    err.println("error: " + Printable.of(api.getMessage()));
                    yield 1;
                }
                case EnvdException envd -> {
                    err.println("error: " + Printable.of(envd.getMessage()));
                    yield 1;
                }
                case RpcException rpc -> {
                    err.println("error: [" + rpc.code().wireName() + "] " + Printable.of(rpc.getMessage()));
                    yield 1;
                }
                case IllegalArgumentException bad -> {
                    err.println("error: " + Printable.of(bad.getMessage()));
                    yield 2;
                }
                default -> {
                    // a bug: one line for the user, the trace only when asked for
                    err.println("error: " + e.getClass().getSimpleName() + ": " + Printable.of(e.getMessage()));
                    if (env.containsKey("AENV_DEBUG")) {
                        e.printStackTrace(err);
                    }
                    yield 1;
                }
            };
            err.flush();
            return code;
        });
        return cli.execute(args);
    }

    /** The root command with the commands {@code args} may run (settings made on it later reach them all). */
    static CommandLine commandLine(Aenv aenv, String[] args) {
        CommandLine cli = new CommandLine(aenv);
        Optional<Class<?>> named = namedCommand(cli, args).filter(c -> !DESCRIBING.contains(c));
        for (Class<?> command : COMMANDS) {
            if (named.isEmpty() || named.get() == command) {
                cli.addSubcommand(command);
            }
        }
        return cli;
    }

    /**
     * The command {@code args} names: the first word after the root's options (parsed by picocli on the root alone,
     * with no commands added yet), matched against each command's name and aliases. Empty when the line names none, an
     * unknown one or has bad root options: then all commands are added, and the real parse reports what is wrong.
     */
    private static Optional<Class<?>> namedCommand(CommandLine root, String[] args) {
        root.setStopAtPositional(true).setUnmatchedArgumentsAllowed(true);
        List<String> rest;
        try {
            rest = root.parseArgs(args).unmatched();
        } catch (CommandLine.ParameterException e) {
            return Optional.empty();
        } finally {
            root.setStopAtPositional(false).setUnmatchedArgumentsAllowed(false);
        }
        if (rest.isEmpty()) {
            return Optional.empty();
        }
        String word = rest.getFirst();
        for (Class<?> command : COMMANDS) {
            Command annotation = command.getAnnotation(Command.class);
            if (annotation.name().equals(word) || List.of(annotation.aliases()).contains(word)) {
                return Optional.of(command);
            }
        }
        return Optional.empty();
    }

    ObjectMapper json() {
        return JsonMappers.print();
    }

    /** A setting's value and where it came from (a flag, a variable, the config file, the default). */
    record Setting(String value, String source) {}

    /** The API key: {@code --api-key}, else {@code AENV_API_KEY}, else the one {@code aenv auth login} saved. */
    Optional<Setting> apiKey() {
        if (apiKey != null) {
            return Optional.of(new Setting(apiKey, "--api-key"));
        }
        String fromEnv = env.get("AENV_API_KEY");
        if (fromEnv != null && !fromEnv.isBlank()) {
            return Optional.of(new Setting(fromEnv, "AENV_API_KEY"));
        }
        return userConfig()
                .get(UserConfig.KEY)
                .map(k -> new Setting(k, userConfig().file().toString()));
    }

    /** The API URL: {@code --api-url}, else {@code AENV_API_URL}, else the saved one, else {@value #DEFAULT_URL}. */
    Setting apiUrl() {
        if (apiUrl != null) {
            return new Setting(apiUrl, "--api-url");
        }
        String fromEnv = env.get("AENV_API_URL");
        if (fromEnv != null && !fromEnv.isBlank()) {
            return new Setting(fromEnv, "AENV_API_URL");
        }
        return userConfig()
                .get(UserConfig.URL)
                .map(u -> new Setting(u, userConfig().file().toString()))
                .orElse(new Setting(DEFAULT_URL, "default"));
    }

    UserConfig userConfig() {
        if (userConfig == null) {
            userConfig = UserConfig.of(env);
        }
        return userConfig;
    }

    ApiClient client() {
        String key = apiKey().map(Setting::value)
                .filter(k -> !k.isBlank())
                .orElseThrow(() -> new IllegalArgumentException(
                        "no API key: pass --api-key, set AENV_API_KEY or run aenv auth login"));
        return client(baseUri(apiUrl().value()), key);
    }

    ApiClient client(URI base, String key) {
        return new ApiClient(base, key);
    }

    URI baseUri() {
        return baseUri(apiUrl().value());
    }

    static URI baseUri(String url) {
        URI base;
        try {
            base = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad --api-url: " + url);
        }
        if (base.getScheme() == null
                || !(base.getScheme().equals("http") || base.getScheme().equals("https"))) {
            throw new IllegalArgumentException("--api-url must be an http(s) URL: " + url);
        }
        return base;
    }

    /** envd of a running sandbox through the server's proxy (the token from GET /sandboxes/{id}). */
    EnvdClient envd(String sandboxId) {
        Optional<String> token = client().envdToken(sandboxId);
        URI base = baseUri();
        // HTTP/1.1: no h2c upgrade attempt on the proxy's streams
        HttpClient.Builder http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5));
        if (base.getScheme().equals("http")) {
            // no TLS to set up: the default context would load the JDK's trusted certificates first (~0.1 s of CPU);
            // this one is never used (plain http only), so it has no implementation behind it
            http.sslContext(new SSLContext(null, null, "none") {}).sslParameters(new SSLParameters());
        }
        return EnvdClient.throughProxy(base, sandboxId, token, http.build());
    }

    /** A variable of aenv's own environment. */
    Optional<String> environment(String name) {
        return Optional.ofNullable(env.get(name));
    }

    Stdio stdio() {
        return stdio;
    }

    PrintWriter out() {
        return out;
    }

    PrintWriter err() {
        return err;
    }

    Output output() {
        return output;
    }

    void onInterrupt(Runnable action) {
        interrupts.accept(action);
    }

    /** Prints {@code value} as JSON, without the envd access token (aenv uses it itself; it is never shown). */
    int printJson(Object value) {
        try {
            com.fasterxml.jackson.databind.JsonNode tree = json().valueToTree(value);
            withoutEnvdTokens(tree);
            out.println(json().writeValueAsString(tree));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot print JSON", e);
        }
        out.flush();
        return 0;
    }

    private static void withoutEnvdTokens(com.fasterxml.jackson.databind.JsonNode node) {
        if (node instanceof com.fasterxml.jackson.databind.node.ObjectNode object) {
            object.remove("envdAccessToken");
        }
        node.forEach(Aenv::withoutEnvdTokens);
    }

    int say(String line) {
        if (output == Output.json) {
            return printJson(Map.of("message", line));
        }
        out.println(line);
        out.flush();
        return 0;
    }
}
