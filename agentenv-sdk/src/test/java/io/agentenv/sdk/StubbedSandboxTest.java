package io.agentenv.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.FileType;
import io.agentenv.envd.protocol.filesystem.StatResponse;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.sdk.commands.CommandExitException;
import io.agentenv.sdk.commands.CommandResult;
import io.agentenv.sdk.commands.RunOptions;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The SDK against a scripted stand-in for the control plane and envd: what goes on the wire (routes, bodies, headers)
 * and how each kind of failure becomes its typed exception.
 */
class StubbedSandboxTest {
    private static final String CREATED = "{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"clientID\":\"\","
            + "\"envdVersion\":\"0.6.13\",\"envdAccessToken\":\"tok\",\"domain\":null,\"trafficAccessToken\":null}";

    private StubServer stub;
    private SandboxConfig config;

    @BeforeEach
    void start() throws Exception {
        stub = new StubServer();
        config = SandboxConfig.builder(java.util.Map.of())
                .apiKey("key")
                .apiUrl(stub.url())
                .sandboxUrl(stub.url())
                .build();
        stub.json("POST", "/v2/sandboxes", 201, CREATED);
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    private static byte[] event(ProcessEvent e) {
        return StartResponse.newBuilder().setEvent(e).build().toByteArray();
    }

    private static byte[] startEvent(int pid) {
        return event(ProcessEvent.newBuilder()
                .setStart(ProcessEvent.StartEvent.newBuilder().setPid(pid))
                .build());
    }

    private static byte[] stdout(String text) {
        return event(ProcessEvent.newBuilder()
                .setData(ProcessEvent.DataEvent.newBuilder().setStdout(ByteString.copyFromUtf8(text)))
                .build());
    }

    private static byte[] stdoutBytes(byte[] bytes) {
        return event(ProcessEvent.newBuilder()
                .setData(ProcessEvent.DataEvent.newBuilder().setStdout(ByteString.copyFrom(bytes)))
                .build());
    }

    private static byte[] stderr(String text) {
        return event(ProcessEvent.newBuilder()
                .setData(ProcessEvent.DataEvent.newBuilder().setStderr(ByteString.copyFromUtf8(text)))
                .build());
    }

    private static byte[] end(int code, String error) {
        ProcessEvent.EndEvent.Builder end = ProcessEvent.EndEvent.newBuilder()
                .setExitCode(code)
                .setExited(true)
                .setStatus("exit status " + code);
        if (error != null) {
            end.setError(error);
        }
        return event(ProcessEvent.newBuilder().setEnd(end).build());
    }

    @Test
    void createSendsTheV2BodyWithTheApiKeyAndOnlyTheSetFields() {
        Sandbox s = Sandbox.create(
                CreateOptions.builder()
                        .template("base")
                        .timeout(Duration.ofMillis(1500))
                        .metadata("a", "b")
                        .env("FOO", "bar")
                        .allowInternetAccess(false)
                        .network(NetworkOptions.egress(List.of("10.0.0.0/8"), List.of("0.0.0.0/0")))
                        .lifecycle(Lifecycle.pause(true).withAutoResume(true))
                        .build(),
                config);
        StubServer.Request r = stub.last("/v2/sandboxes");
        assertThat(r.header("X-API-KEY")).isEqualTo("key");
        assertThat(r.bodyText())
                .isEqualTo(
                        "{\"templateID\":\"base\",\"timeout\":2,\"metadata\":{\"a\":\"b\"},"
                                + "\"envVars\":{\"FOO\":\"bar\"},\"allow_internet_access\":false,\"network\":{\"allowOut\":[\"10.0.0.0/8\"],"
                                + "\"denyOut\":[\"0.0.0.0/0\"]},\"autoPause\":true,\"autoPauseMemory\":true,\"autoResume\":{\"enabled\":true}}");
        assertThat(s.sandboxId()).isEqualTo("sbx1");
        assertThat(s.envdAccessToken()).contains("tok");
        assertThat(s.getHost(8080)).isEqualTo("8080-sbx1.e2b.app");

        Sandbox.create(CreateOptions.defaults(), config);
        assertThat(stub.last("/v2/sandboxes").bodyText()).isEqualTo("{\"templateID\":\"base\"}");
    }

    @Test
    void controlPlaneErrorsBecomeTypedExceptions() {
        stub.json("POST", "/v2/sandboxes", 401, "{\"code\":401,\"message\":\"bad key\"}");
        assertThatThrownBy(() -> Sandbox.create(CreateOptions.defaults(), config))
                .isInstanceOf(AuthenticationException.class)
                .hasMessageContaining("bad key");
        stub.json("POST", "/v2/sandboxes", 400, "{\"code\":400,\"message\":\"template nope not found\"}");
        assertThatThrownBy(() -> Sandbox.create("nope", config))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("template nope not found");
        stub.json("POST", "/v2/sandboxes", 429, "{\"code\":429,\"message\":\"too many sandboxes\"}");
        assertThatThrownBy(() -> Sandbox.create(CreateOptions.defaults(), config))
                .isInstanceOf(RateLimitException.class)
                .satisfies(e -> assertThat(((SandboxException) e).statusCode()).hasValue(429));
        stub.json("POST", "/v2/sandboxes", 503, "{\"code\":503,\"message\":\"shutting down\"}");
        assertThatThrownBy(() -> Sandbox.create(CreateOptions.defaults(), config))
                .isInstanceOf(ServiceBusyException.class);
        stub.json("POST", "/v2/sandboxes", 500, "boom");
        assertThatThrownBy(() -> Sandbox.create(CreateOptions.defaults(), config))
                .isExactlyInstanceOf(SandboxException.class)
                .hasMessage("500: boom");

        stub.json("GET", "/sandboxes/gone", 404, "{\"code\":404,\"message\":\"sandbox gone not found\"}");
        assertThatThrownBy(() -> Sandbox.getInfo("gone", config)).isInstanceOf(SandboxNotFoundException.class);
        stub.json("POST", "/v2/sandboxes/gone/connect", 404, "{\"code\":404,\"message\":\"not found\"}");
        assertThatThrownBy(() -> Sandbox.connect("gone", config)).isInstanceOf(SandboxNotFoundException.class);
        stub.json("POST", "/sandboxes/gone/timeout", 404, "{\"code\":404,\"message\":\"not found\"}");
        assertThatThrownBy(() -> Sandbox.setTimeout("gone", Duration.ofSeconds(5), config))
                .isInstanceOf(SandboxNotFoundException.class);
    }

    @Test
    void softOutcomesAreBooleans() {
        stub.json("DELETE", "/sandboxes/gone", 404, "{\"code\":404,\"message\":\"not found\"}");
        assertThat(Sandbox.kill("gone", config)).isFalse();
        stub.on("DELETE", "/sandboxes/sbx1", (ex, r) -> StubServer.reply(ex, 204, null, new byte[0]));
        assertThat(Sandbox.kill("sbx1", config)).isTrue();
        stub.json("POST", "/sandboxes/sbx1/pause", 409, "{\"code\":409,\"message\":\"already paused\"}");
        assertThat(Sandbox.pause("sbx1", Optional.of(true), config)).isFalse();
        assertThat(stub.last("/sandboxes/sbx1/pause").bodyText()).isEqualTo("{\"memory\":true}");
        stub.json("DELETE", "/templates/snap", 404, "{\"code\":404,\"message\":\"not found\"}");
        assertThat(Sandbox.deleteSnapshot("snap", config)).isFalse();
    }

    @Test
    void aMissingApiKeyFailsBeforeAnyRequest() {
        SandboxConfig noKey =
                SandboxConfig.builder(java.util.Map.of()).apiUrl(stub.url()).build();
        assertThatThrownBy(() -> Sandbox.getInfo("x", noKey))
                .isInstanceOf(AuthenticationException.class)
                .hasMessageContaining("E2B_API_KEY");
        assertThat(stub.requests).isEmpty();
    }

    @Test
    void rateLimitsWithRetryAfterAreRetried() {
        int[] calls = {0};
        stub.on("GET", "/sandboxes/sbx1", (ex, r) -> {
            if (calls[0]++ == 0) {
                ex.getResponseHeaders().set("Retry-After", "0");
                StubServer.reply(ex, 429, "application/json", "{\"code\":429,\"message\":\"slow down\"}");
            } else {
                StubServer.reply(
                        ex,
                        200,
                        "application/json",
                        "{\"sandboxID\":\"sbx1\",\"templateID\":\"base\","
                                + "\"startedAt\":\"2026-01-01T00:00:00Z\",\"endAt\":\"2026-01-01T00:05:00Z\",\"state\":\"paused\","
                                + "\"cpuCount\":2,\"memoryMB\":512,\"envdVersion\":\"0.6.13\",\"metadata\":{\"k\":\"v\"},"
                                + "\"lifecycle\":{\"onTimeout\":\"pause\",\"autoResume\":true}}");
            }
        });
        SandboxInfo info = Sandbox.getInfo("sbx1", config);
        assertThat(calls[0]).isEqualTo(2);
        assertThat(info.state()).isEqualTo(SandboxState.PAUSED);
        assertThat(info.metadata()).containsEntry("k", "v");
        assertThat(info.lifecycle()).hasValueSatisfying(l -> {
            assertThat(l.onTimeout()).isEqualTo(OnTimeout.PAUSE);
            assertThat(l.autoResume()).contains(true);
        });
    }

    @Test
    void listEncodesMetadataAsE2bDoesAndFollowsPageTokens() {
        stub.on("GET", "/v2/sandboxes", (ex, r) -> {
            boolean first = r.query() == null || !r.query().contains("nextToken");
            if (first) {
                ex.getResponseHeaders().set("X-Next-Token", "page2");
            }
            StubServer.reply(ex, 200, "application/json", "[]");
        });
        Paginator<SandboxInfo> pages = Sandbox.list(
                ListOptions.builder()
                        .metadata("a", "b c")
                        .states(SandboxState.RUNNING, SandboxState.PAUSED)
                        .limit(10)
                        .build(),
                config);
        assertThat(pages.nextItems()).isEmpty();
        assertThat(stub.last("/v2/sandboxes").query())
                .isEqualTo("metadata=a%3Db%252520c&state=running%2Cpaused&limit=10");
        assertThat(pages.hasNext()).isTrue();
        pages.nextItems();
        assertThat(stub.last("/v2/sandboxes").query()).endsWith("&nextToken=page2");
        assertThat(pages.hasNext()).isFalse();
        assertThatThrownBy(pages::nextItems).isInstanceOf(InvalidArgumentException.class);
    }

    @Test
    void commandsStreamOutputAndReportExitCodes() {
        stub.on(
                "POST",
                "/process.Process/Start",
                StubServer.stream(
                        List.of(
                                startEvent(7),
                                stdout("hel"),
                                stdout("lo\n"),
                                stderr("warn\n"),
                                end(3, "exit status 3")),
                        "{}"));
        Sandbox s = Sandbox.create(CreateOptions.defaults(), config);
        List<String> seen = new ArrayList<>();
        assertThatThrownBy(() -> s.commands()
                        .run(
                                "echo hello",
                                RunOptions.builder()
                                        .user("root")
                                        .cwd("/tmp")
                                        .env("X", "1")
                                        .timeout(Duration.ofSeconds(5))
                                        .onStdout(seen::add)
                                        .build()))
                .isInstanceOfSatisfying(CommandExitException.class, e -> {
                    assertThat(e.exitCode()).isEqualTo(3);
                    assertThat(e.stdout()).isEqualTo("hello\n");
                    assertThat(e.stderr()).isEqualTo("warn\n");
                });
        assertThat(seen).containsExactly("hel", "lo\n");

        StubServer.Request start = stub.last("/process.Process/Start");
        assertThat(start.header("Content-Type")).isEqualTo("application/connect+proto");
        assertThat(start.header("Connect-Protocol-Version")).isEqualTo("1");
        assertThat(start.header("Connect-Timeout-Ms")).isEqualTo("5000");
        assertThat(start.header("Keepalive-Ping-Interval")).isEqualTo("50");
        assertThat(start.header("E2b-Sandbox-Id")).isEqualTo("sbx1");
        assertThat(start.header("E2b-Sandbox-Port")).isEqualTo("49983");
        assertThat(start.header("X-Access-Token")).isEqualTo("tok");
        assertThat(start.header("Authorization"))
                .isEqualTo("Basic " + Base64.getEncoder().encodeToString("root:".getBytes(StandardCharsets.UTF_8)));
        assertThat(start.header("X-API-KEY")).isNull();
        StartRequest request = parseEnvelope(start.body());
        assertThat(request.getProcess().getCmd()).isEqualTo("/bin/bash");
        assertThat(request.getProcess().getArgsList()).containsExactly("-l", "-c", "echo hello");
        assertThat(request.getProcess().getCwd()).isEqualTo("/tmp");
        assertThat(request.getProcess().getEnvsMap()).containsEntry("X", "1");
        assertThat(request.hasStdin()).isTrue();
        assertThat(request.getStdin()).isFalse();
    }

    @Test
    void theRequestTimeoutBoundsOnlyTheStartOfAStream() {
        SandboxConfig quick =
                config.toBuilder().requestTimeout(Duration.ofMillis(300)).build();
        stub.on("POST", "/process.Process/Start", (ex, r) -> {
            ex.getResponseHeaders().set("Content-Type", "application/connect+proto");
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(StubServer.envelope(0, startEvent(11)));
                out.flush();
                try {
                    Thread.sleep(1000); // quiet for longer than the request timeout
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                out.write(StubServer.envelope(0, stdout("late\n")));
                out.write(StubServer.envelope(0, end(0, null)));
                out.write(StubServer.envelope(2, "{}".getBytes(StandardCharsets.UTF_8)));
            }
        });
        assertThat(Sandbox.create(CreateOptions.defaults(), quick)
                        .commands()
                        .run("sleep 1; echo late")
                        .stdout())
                .isEqualTo("late\n");
    }

    @Test
    void aCharacterSplitAcrossChunksStaysWhole() {
        byte[] euro = "€".getBytes(StandardCharsets.UTF_8);
        stub.on(
                "POST",
                "/process.Process/Start",
                StubServer.stream(
                        List.of(
                                startEvent(8),
                                stdoutBytes(Arrays.copyOfRange(euro, 0, 1)),
                                stdoutBytes(Arrays.copyOfRange(euro, 1, 3)),
                                end(0, null)),
                        "{}"));
        CommandResult result =
                Sandbox.create(CreateOptions.defaults(), config).commands().run("printf €");
        assertThat(result.stdout()).isEqualTo("€");
        assertThat(stub.last("/process.Process/Start").header("Authorization")).isNull();
    }

    @Test
    void streamErrorsBecomeTypedExceptions() {
        Sandbox s = Sandbox.create(CreateOptions.defaults(), config);
        stub.on(
                "POST",
                "/process.Process/Start",
                StubServer.stream(
                        List.of(startEvent(9)),
                        "{\"error\":{\"code\":\"deadline_exceeded\",\"message\":\"timed out\"}}"));
        assertThatThrownBy(() -> s.commands().run("sleep 10"))
                .isInstanceOf(TimeoutException.class)
                .hasMessageContaining("deadline_exceeded");

        stub.on(
                "POST",
                "/process.Process/Start",
                StubServer.stream(
                        List.of(),
                        "{\"error\":{\"code\":\"invalid_argument\",\"message\":\"cwd '/nope' does not exist\"}}"));
        assertThatThrownBy(() -> s.commands().run("true"))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("/nope");

        stub.json("POST", "/process.Process/Start", 503, "");
        assertThatThrownBy(() -> s.commands().run("true")).isInstanceOf(SandboxNotFoundException.class);

        // cut without an end-of-stream message while /health says the sandbox is gone
        stub.on("POST", "/process.Process/Start", (ex, r) -> {
            ex.getResponseHeaders().set("Content-Type", "application/connect+proto");
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(StubServer.envelope(0, startEvent(10)));
            }
        });
        stub.json("GET", "/health", 502, "{\"code\":502,\"message\":\"sandbox not running\"}");
        assertThatThrownBy(() -> s.commands().run("true"))
                .isInstanceOf(TimeoutException.class)
                .hasMessageContaining("killed or reached its end of life");
        assertThat(s.isRunning()).isFalse();
    }

    @Test
    void unaryAndFileErrorsBecomeTypedExceptions() {
        Sandbox s = Sandbox.create(CreateOptions.defaults(), config);
        stub.json("POST", "/filesystem.Filesystem/Stat", 404, "{\"code\":\"not_found\",\"message\":\"no such file\"}");
        assertThatThrownBy(() -> s.files().getInfo("/nope"))
                .isInstanceOf(FileNotFoundException.class)
                .hasMessageContaining("[not_found] no such file");
        assertThat(s.files().exists("/nope")).isFalse();
        stub.json(
                "POST",
                "/filesystem.Filesystem/ListDir",
                400,
                "{\"code\":\"invalid_argument\",\"message\":\"not a dir\"}");
        assertThatThrownBy(() -> s.files().list("/etc/hostname")).isInstanceOf(InvalidArgumentException.class);
        stub.json(
                "POST", "/filesystem.Filesystem/MakeDir", 409, "{\"code\":\"already_exists\",\"message\":\"exists\"}");
        assertThat(s.files().makeDir("/tmp")).isFalse();
        stub.json("POST", "/filesystem.Filesystem/Remove", 401, "{\"code\":\"unauthenticated\",\"message\":\"token\"}");
        assertThatThrownBy(() -> s.files().remove("/x")).isInstanceOf(AuthenticationException.class);
        stub.json("POST", "/process.Process/SendSignal", 502, "bad gateway");
        assertThatThrownBy(() -> s.commands().kill(3)).isInstanceOf(TimeoutException.class);
        stub.json("POST", "/process.Process/SendSignal", 404, "{\"code\":\"not_found\",\"message\":\"no process\"}");
        assertThat(s.commands().kill(3)).isFalse();
        stub.json("POST", "/process.Process/SendInput", 429, "{\"code\":\"resource_exhausted\",\"message\":\"slow\"}");
        assertThatThrownBy(() -> s.commands().sendStdin(3, "x")).isInstanceOf(RateLimitException.class);

        stub.json("POST", "/files", 507, "{\"code\":507,\"message\":\"no space left on device\"}");
        assertThatThrownBy(() -> s.files().write("/tmp/a", "x")).isInstanceOf(NotEnoughSpaceException.class);
        stub.json("GET", "/files", 404, "{\"code\":404,\"message\":\"file not found\"}");
        assertThatThrownBy(() -> s.files().read("/tmp/missing")).isInstanceOf(FileNotFoundException.class);
        assertThatThrownBy(() -> s.files().list("/tmp", 0)).isInstanceOf(InvalidArgumentException.class);
    }

    @Test
    void filesTravelAsEnvdExpectsThem() {
        Sandbox s = Sandbox.create(CreateOptions.defaults(), config);
        stub.json("POST", "/files", 200, "[{\"path\":\"/home/user/a.txt\",\"name\":\"a.txt\",\"type\":\"file\"}]");
        assertThat(s.files().withUser("root").write("a.txt", "hi").path()).isEqualTo("/home/user/a.txt");
        StubServer.Request upload = stub.last("/files");
        assertThat(upload.query()).isEqualTo("username=root&path=a.txt");
        assertThat(upload.header("Content-Type")).isEqualTo("application/octet-stream");
        assertThat(upload.bodyText()).isEqualTo("hi");

        s.files().write(List.of(io.agentenv.sdk.files.WriteEntry.of("/tmp/b.txt", "B")));
        upload = stub.last("/files");
        assertThat(upload.query()).isNull();
        assertThat(upload.header("Content-Type")).startsWith("multipart/form-data; boundary=");
        assertThat(upload.bodyText()).contains("filename=\"/tmp/b.txt\"").contains("\r\n\r\nB\r\n");

        stub.on(
                "POST",
                "/filesystem.Filesystem/Stat",
                (ex, r) -> StubServer.reply(
                        ex,
                        200,
                        "application/proto",
                        StatResponse.newBuilder()
                                .setEntry(EntryInfo.newBuilder()
                                        .setName("b.txt")
                                        .setPath("/tmp/b.txt")
                                        .setType(FileType.FILE_TYPE_FILE)
                                        .setSize(1)
                                        .setMode(0644)
                                        .setPermissions("-rw-r--r--"))
                                .build()
                                .toByteArray()));
        io.agentenv.sdk.files.EntryInfo info = s.files().getInfo("/tmp/b.txt");
        assertThat(info.type()).isEqualTo(io.agentenv.sdk.files.FileType.FILE);
        assertThat(info.mode()).isEqualTo(0644);
        assertThat(stub.last("/filesystem.Filesystem/Stat").header("Content-Type"))
                .isEqualTo("application/proto");
    }

    @Test
    void signedUrlsUseEnvdsSignature() {
        Sandbox s = Sandbox.create(CreateOptions.defaults(), config);
        String expected = Sandbox.signature("a.txt", "read", "", "tok", Optional.empty());
        assertThat(s.downloadUrl("a.txt", UrlOptions.defaults()))
                .isEqualTo(stub.url() + "/files?path=a.txt&signature="
                        + expected.replace("/", "%2F").replace("+", "%2B"));
        // sha256("a.txt:read::tok"), base64 without padding
        assertThat(expected)
                .isEqualTo("v1_"
                        + java.util.Base64.getEncoder().withoutPadding().encodeToString(sha256("a.txt:read::tok")));
        String upload =
                s.uploadUrl("/tmp/x", UrlOptions.defaults().withUser("root").withExpiration(Duration.ofMinutes(1)));
        assertThat(upload)
                .startsWith(stub.url() + "/files?username=root&path=%2Ftmp%2Fx&signature=v1_")
                .contains("&signature_expiration=");
    }

    @Test
    void debugModeMakesNoControlPlaneCalls() {
        SandboxConfig debug = SandboxConfig.builder(java.util.Map.of())
                .debug(true)
                .apiUrl(stub.url())
                .build();
        Sandbox s = Sandbox.create(CreateOptions.defaults(), debug);
        assertThat(s.sandboxId()).isEqualTo("debug_sandbox_id");
        assertThat(s.kill()).isTrue();
        assertThat(stub.requests).isEmpty();
    }

    private static StartRequest parseEnvelope(byte[] body) {
        try {
            return StartRequest.parseFrom(Arrays.copyOfRange(body, 5, body.length));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] sha256(String s) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
