package io.agentenv.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.agentenv.api.model.AutoResume;
import io.agentenv.api.model.ListedSandbox;
import io.agentenv.api.model.NewSandboxV2;
import io.agentenv.api.model.Sandbox;
import io.agentenv.api.model.SandboxDetail;
import io.agentenv.api.model.SandboxForkResult;
import io.agentenv.api.model.SnapshotInfo;
import io.agentenv.envd.client.EnvdCallException;
import io.agentenv.envd.client.ProxiedEnvdClient;
import io.agentenv.envd.protocol.connect.RpcException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
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
        },
        subcommands = {
            CommandLine.HelpCommand.class,
            AuthCommand.class,
            CompletionCommand.class,
            ExecCommand.class,
            StartCommand.class,
            FilesCommands.class,
            LogsCommand.class,
            MetricsCommand.class,
            NetworkCommand.class,
            TemplatesCommand.class
        })
public final class Aenv {
    static final String DEFAULT_URL = "http://localhost:3000";

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
    /** For printing (-o json): indented. Made on first use, as {@link #wire}: Jackson takes long to start. */
    private ObjectMapper json;
    /** For request and response bodies: compact, and absent fields are left out as the E2B SDK does. */
    private ObjectMapper wire;

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
        CommandLine cli = new CommandLine(aenv);
        cli.setOut(aenv.out);
        cli.setErr(err);
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            int code = switch (e) {
                case ApiException api -> {
                    err.println("error: " + Printable.of(api.getMessage()));
                    yield 1;
                }
                case EnvdCallException envd -> {
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

    private static JsonMapper.Builder mapper() {
        return JsonMapper.builder()
                .addModule(new JavaTimeModule())
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .disable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    }

    ObjectMapper json() {
        if (json == null) {
            json = mapper().enable(SerializationFeature.INDENT_OUTPUT).build();
        }
        return json;
    }

    ObjectMapper wire() {
        if (wire == null) {
            wire = mapper().defaultPropertyInclusion(com.fasterxml.jackson.annotation.JsonInclude.Value.construct(
                            com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL,
                            com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL))
                    .build();
        }
        return wire;
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
        return new ApiClient(base, key, this::wire);
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
    ProxiedEnvdClient envd(String sandboxId) {
        ApiClient api = client();
        ProxiedEnvdClient.Target target = api.envdTarget(sandboxId);
        URI base = baseUri();
        // HTTP/1.1: no h2c upgrade attempt on the proxy's streams
        HttpClient.Builder http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5));
        if (base.getScheme().equals("http")) {
            // no TLS to set up: the default context would load the JDK's trusted certificates first (~0.1 s of CPU);
            // this one is never used (plain http only), so it has no implementation behind it
            http.sslContext(new SSLContext(null, null, "none") {}).sslParameters(new SSLParameters());
        }
        return new ProxiedEnvdClient(base, target, http.build());
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

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a sandbox and print its id.")
    int create(
            @Parameters(
                            index = "0",
                            defaultValue = "base",
                            paramLabel = "TEMPLATE",
                            description = "Template id, snapshot id or alias (default: base).")
                    String template,
            @Option(names = "--timeout", paramLabel = "SECONDS", description = "TTL (server default: 300).")
                    Integer timeout,
            @Option(names = "--metadata", paramLabel = "KEY=VALUE", description = "Metadata (repeatable).")
                    Map<String, String> metadata,
            @Option(names = "--env", paramLabel = "KEY=VALUE", description = "Environment variable (repeatable).")
                    Map<String, String> envVars,
            @Option(names = "--on-timeout", paramLabel = "ACTION", description = "kill (default) or pause.")
                    String onTimeout,
            @Option(names = "--auto-resume", description = "Resume on incoming traffic while paused.")
                    boolean autoResume,
            @Option(names = "--no-internet", description = "Deny outbound internet access.") boolean noInternet) {
        Boolean autoPause = switch (onTimeout == null ? "" : onTimeout) {
            case "" -> null;
            case "kill" -> false;
            case "pause" -> true;
            default -> throw new IllegalArgumentException("--on-timeout must be kill or pause");
        };
        NewSandboxV2 body = new NewSandboxV2(
                template,
                timeout,
                autoPause,
                null,
                autoResume ? new AutoResume(true) : null,
                noInternet ? Boolean.FALSE : null,
                null,
                metadata,
                envVars,
                null);
        Sandbox sandbox = client().create(body);
        if (output == Output.json) {
            return printJson(sandbox);
        }
        out.println(sandbox.sandboxID());
        out.flush();
        return 0;
    }

    @Command(
            name = "list",
            mixinStandardHelpOptions = true,
            aliases = "ls",
            description = "List sandboxes (running and paused unless --state).")
    int list(
            @Option(names = "--state", paramLabel = "STATES", description = "running, paused or running,paused.")
                    String state,
            @Option(
                            names = "--metadata",
                            paramLabel = "KEY=VALUE",
                            description = "Only sandboxes with this metadata (repeatable, AND).")
                    Map<String, String> metadata) {
        List<ListedSandbox> items =
                client().list(Optional.ofNullable(state), metadata == null ? Map.of() : new LinkedHashMap<>(metadata));
        if (output == Output.json) {
            return printJson(items);
        }
        Table table = new Table("SANDBOX ID", "TEMPLATE", "STATE", "STARTED", "ENDS", "CPU", "MEMORY MB", "METADATA");
        for (ListedSandbox s : items) {
            table.row(
                    s.sandboxID(),
                    s.alias() != null ? s.alias() : s.templateID(),
                    s.state().wire(),
                    s.startedAt(),
                    s.endAt(),
                    s.cpuCount(),
                    s.memoryMB(),
                    s.metadata().isEmpty() ? "-" : s.metadata());
        }
        table.print(out);
        return 0;
    }

    @Command(name = "info", mixinStandardHelpOptions = true, description = "Show one sandbox.")
    int info(@Parameters(paramLabel = "SANDBOX_ID") String id) {
        SandboxDetail d = client().info(id);
        if (output == Output.json) {
            return printJson(d);
        }
        new Table("FIELD", "VALUE")
                .row("sandbox id", d.sandboxID())
                .row(
                        "template",
                        d.alias() != null && !d.alias().equals(d.templateID())
                                ? d.alias() + " (" + d.templateID() + ")"
                                : d.templateID())
                .row("state", d.state().wire())
                .row("started", d.startedAt())
                .row("ends", d.endAt())
                .row(
                        "on timeout",
                        d.lifecycle() == null ? null : d.lifecycle().onTimeout().wire())
                .row("cpu", d.cpuCount())
                .row("memory MB", d.memoryMB())
                .row("disk MB", d.diskSizeMB())
                .row("metadata", d.metadata().isEmpty() ? "-" : d.metadata())
                .row("envd version", d.envdVersion())
                .print(out);
        return 0;
    }

    @Command(
            name = "kill",
            mixinStandardHelpOptions = true,
            aliases = {"rm", "delete"},
            description = "Kill a sandbox (its state is deleted).")
    int kill(@Parameters(paramLabel = "SANDBOX_ID") String id) {
        if (!client().kill(id)) {
            throw new ApiException(404, "sandbox " + id + " not found");
        }
        return say("killed " + id);
    }

    @Command(name = "pause", mixinStandardHelpOptions = true, description = "Pause a sandbox to disk.")
    int pause(
            @Parameters(paramLabel = "SANDBOX_ID") String id,
            @Option(names = "--no-memory", description = "Keep only the filesystem.") boolean noMemory) {
        return say(client().pause(id, !noMemory) ? "paused " + id : id + " was already paused");
    }

    @Command(
            name = "connect",
            mixinStandardHelpOptions = true,
            aliases = "resume",
            description = "Resume a paused sandbox, or extend a running one's TTL.")
    int connect(
            @Parameters(paramLabel = "SANDBOX_ID") String id,
            @Option(names = "--timeout", paramLabel = "SECONDS", description = "TTL from now (server default: 300).")
                    Integer timeout) {
        ApiClient.Connected connected = client().connect(id, Optional.ofNullable(timeout));
        if (output == Output.json) {
            return printJson(connected.sandbox());
        }
        return say((connected.resumed() ? "resumed " : "running ") + id);
    }

    @Command(
            name = "set-timeout",
            mixinStandardHelpOptions = true,
            aliases = "timeout",
            description = "Set the TTL to SECONDS from now (may shorten it).")
    int setTimeout(
            @Parameters(index = "0", paramLabel = "SANDBOX_ID") String id,
            @Parameters(index = "1", paramLabel = "SECONDS") int seconds) {
        if (seconds < 0) {
            throw new IllegalArgumentException("SECONDS must be >= 0");
        }
        client().setTimeout(id, seconds);
        return say("timeout of " + id + " set to " + seconds + " s");
    }

    @Command(
            name = "fork",
            mixinStandardHelpOptions = true,
            description = "Fork a running sandbox into COUNT children.")
    int fork(
            @Parameters(paramLabel = "SANDBOX_ID") String id,
            @Option(names = "--count", defaultValue = "1", paramLabel = "COUNT", description = "1..100 (default: 1).")
                    int count,
            @Option(
                            names = "--timeout",
                            paramLabel = "SECONDS",
                            description = "Children's TTL (default: the source's).")
                    Integer timeout) {
        if (count < 1 || count > 100) {
            throw new IllegalArgumentException("--count must be between 1 and 100");
        }
        List<SandboxForkResult> results = client().fork(id, count, Optional.ofNullable(timeout));
        if (output == Output.json) {
            printJson(results);
        } else {
            Table table = new Table("#", "SANDBOX ID", "ERROR");
            for (int i = 0; i < results.size(); i++) {
                SandboxForkResult r = results.get(i);
                table.row(
                        i + 1,
                        r.sandbox() == null ? null : r.sandbox().sandboxID(),
                        r.error() == null
                                ? null
                                : r.error().code() + " " + r.error().message());
            }
            table.print(out);
        }
        return results.stream().allMatch(r -> r.sandbox() != null) ? 0 : 1;
    }

    @Command(
            name = "snapshot",
            mixinStandardHelpOptions = true,
            description = "Snapshot a running sandbox; sandboxes can be created from the snapshot id or name.")
    int snapshot(
            @Parameters(paramLabel = "SANDBOX_ID") String id,
            @Option(names = "--name", paramLabel = "NAME", description = "Alias ([A-Za-z0-9_-]+).") String name) {
        SnapshotInfo info = client().snapshot(id, Optional.ofNullable(name));
        if (output == Output.json) {
            return printJson(info);
        }
        out.println(info.snapshotID());
        out.flush();
        return 0;
    }

    @Command(name = "snapshots", mixinStandardHelpOptions = true, description = "List snapshots.")
    int snapshots(
            @Option(names = "--sandbox-id", paramLabel = "SANDBOX_ID", description = "Only this sandbox's snapshots.")
                    String sandboxId) {
        List<SnapshotInfo> items = client().snapshots(Optional.ofNullable(sandboxId));
        if (output == Output.json) {
            return printJson(items);
        }
        Table table = new Table("SNAPSHOT ID", "NAMES", "CREATED", "CPU", "MEMORY MB", "DISK MB");
        for (SnapshotInfo s : items) {
            table.row(
                    s.snapshotID(),
                    s.names().isEmpty() ? "-" : String.join(",", s.names()),
                    s.createdAt(),
                    s.cpuCount(),
                    s.memoryMB(),
                    s.diskSizeMB());
        }
        table.print(out);
        return 0;
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
