package io.agentenv.envd.process;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.connect.ConnectDispatch;
import io.agentenv.envd.connect.ConnectRouter;
import io.agentenv.envd.http.EnvdHandler;
import io.agentenv.envd.http.HttpRoutes;
import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.protocol.connect.Envelope;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.testing.RecordingExchange;
import io.agentenv.envd.users.Accounts;
import io.agentenv.envd.users.UserDirectory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a Start's answer reaches the wire (each flush of the JDK server's chunked stream is one write, its close another):
 * a short command's end event leaves together with the end-of-stream envelope and the terminating chunk, while the
 * events of a running process still leave as they come.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class StartWritesTest {
    private static final Duration DEADLINE = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private ProcessService processes;
    private EnvdHandler handler;

    @BeforeEach
    void wire() throws Exception {
        Clock clock = Clock.systemUTC();
        Session session = new Session(clock);
        Accounts accounts = new Accounts(UserDirectory.system(), session::defaultUser, System.getProperty("user.name"));
        processes = ProcessService.create(
                accounts,
                session,
                new LogJournal(clock, 1 << 20),
                clock,
                Duration.ofMinutes(1),
                ProcessService.DEFAULT_PATH);
        processes.prepareInBackground();
        processes.prepared().get(30, TimeUnit.SECONDS);
        ConnectRouter rpcs = new ConnectRouter();
        processes.register(rpcs);
        handler = new EnvdHandler(new HttpRoutes(), rpcs, new ConnectDispatch(clock), session);
    }

    @AfterEach
    void close() {
        processes.close();
    }

    /** A Start of {@code sh -c script} as the SDK sends it (JSON, stdin closed). */
    private static RecordingExchange start(String script) {
        String json = "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\"," + quoted(script) + "]},\"stdin\":false}";
        return new RecordingExchange(
                "POST",
                "/process.Process/Start",
                Map.of("Content-Type", "application/connect+json"),
                Envelope.message(json.getBytes(UTF_8)).encode());
    }

    private static String quoted(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** The Connect envelopes of one write, as JSON text with "END " before the end-of-stream one. */
    private static List<String> envelopes(byte[] segment) throws IOException {
        ByteArrayInputStream in = new ByteArrayInputStream(segment);
        List<String> texts = new ArrayList<>();
        Optional<Envelope> next;
        while ((next = Envelope.read(in, 1 << 20)).isPresent()) {
            Envelope envelope = next.get();
            String json = new String(envelope.payload(), UTF_8);
            texts.add((envelope.flags() & Envelope.FLAG_END_STREAM) != 0 ? "END " + json : json);
        }
        return texts;
    }

    /** The stdout of every data event in these writes, in order. */
    private static String stdout(List<byte[]> writes) throws IOException {
        StringBuilder out = new StringBuilder();
        Pattern data = Pattern.compile("\"stdout\":\"([^\"]*)\"");
        for (byte[] write : writes) {
            for (String envelope : envelopes(write)) {
                Matcher matcher = data.matcher(envelope);
                if (matcher.find()) {
                    out.append(new String(Base64.getDecoder().decode(matcher.group(1)), UTF_8));
                }
            }
        }
        return out.toString();
    }

    private void serve(RecordingExchange exchange) {
        Thread.ofVirtual().start(() -> {
            try {
                handler.handle(exchange);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void a_short_commands_end_event_leaves_in_one_write_with_the_end_of_stream() throws Exception {
        RecordingExchange exchange = start("true");

        serve(exchange);
        exchange.awaitClosed(DEADLINE);

        List<byte[]> writes = exchange.segments();
        assertThat(writes)
                .as("the start event, then the tail (or all in one when the process ended first)")
                .hasSizeBetween(1, 2);
        assertThat(envelopes(writes.getFirst()).getFirst()).contains("\"start\"");
        List<String> tail = envelopes(writes.getLast());
        assertThat(tail).hasSizeGreaterThanOrEqualTo(2);
        assertThat(tail.get(tail.size() - 2)).contains("\"end\"").contains("\"exited\":true");
        assertThat(tail.getLast()).isEqualTo("END {}");
    }

    @Test
    void output_of_a_running_process_leaves_at_once_and_its_end_with_the_end_of_stream() throws Exception {
        Path fifo = dir.resolve("gate");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(mkfifo.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();
        // the process cannot end before the test writes to the fifo: its first line must be on the wire before that
        RecordingExchange exchange = start("echo first; cat " + fifo + "; echo last");

        serve(exchange);
        byte[] first = exchange.awaitSegment(segment -> new String(segment, UTF_8).contains("Zmlyc3QK"), DEADLINE);
        assertThat(first).as("'first\\n' (base64), sent while the process runs").isNotEmpty();
        try (OutputStream gate = Files.newOutputStream(fifo)) {
            gate.write("second\n".getBytes(UTF_8));
        }
        exchange.awaitClosed(DEADLINE);

        List<byte[]> writes = exchange.segments();
        assertThat(envelopes(writes.getLast()).getLast()).isEqualTo("END {}");
        assertThat(envelopes(writes.getLast()).get(envelopes(writes.getLast()).size() - 2))
                .contains("\"end\"");
        assertThat(stdout(writes)).isEqualTo("first\nsecond\nlast\n");
        assertThat(writes.indexOf(first))
                .as("the first line left before the end")
                .isLessThan(writes.size() - 1);
    }
}
