package io.agentenv.backend.mock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class FakeEnvdTest {
    private static final Instant T0 = Instant.parse("2026-11-29T12:00:00Z");
    private final FakeEnvd envd = new FakeEnvd(new Resources(2, 512, 1024), Clock.fixed(T0, ZoneOffset.UTC));

    @TempDir
    Path dir;

    @Test
    void metrics_are_derived_from_the_resources_and_the_clock() throws Exception {
        var reading = envd.metrics();
        assertThat(reading.timestamp()).isEqualTo(T0);
        assertThat(reading.cpuCount()).isEqualTo(2);
        assertThat(reading.memTotal()).isEqualTo(512L * 1024 * 1024);
        assertThat(reading.diskTotal()).isEqualTo(1024L * 1024 * 1024);
        assertThat(envd.count(FakeEnvd.Call.METRICS)).isEqualTo(1);
    }

    @Test
    void uploads_are_recorded_with_their_bytes_and_a_short_body_is_rejected() throws Exception {
        byte[] bytes = "tar bytes".getBytes(StandardCharsets.UTF_8);
        assertThat(envd.upload("/tmp/a.tar", Optional.of("root"), bytes.length, () -> new ByteArrayInputStream(bytes)))
                .isEqualTo("/tmp/a.tar");
        assertThatThrownBy(() -> envd.upload("/tmp/b.tar", Optional.empty(), 99, () -> new ByteArrayInputStream(bytes)))
                .isInstanceOf(EnvdException.Rejected.class);

        assertThat(envd.uploads()).singleElement().satisfies(upload -> {
            assertThat(upload.path()).isEqualTo("/tmp/a.tar");
            assertThat(upload.user()).contains("root");
            assertThat(upload.content()).isEqualTo(bytes);
        });
        assertThat(envd.count(FakeEnvd.Call.UPLOAD)).isEqualTo(2);
    }

    @Test
    void logs_page_from_the_cursor_and_report_dropped_entries() throws Exception {
        for (int i = 1; i <= 5; i++) {
            envd.log(EnvdLogEntry.Source.PROCESS, "INFO", OptionalInt.of(7), "stdout", "line " + i);
        }
        EnvdLogPage first = envd.logs(0, 2);
        assertThat(first.entries()).extracting(EnvdLogEntry::message).containsExactly("line 1", "line 2");
        EnvdLogPage second = envd.logs(first.nextCursor(), 2);
        assertThat(second.entries()).extracting(EnvdLogEntry::message).containsExactly("line 3", "line 4");

        envd.dropOldest(4);
        EnvdLogPage after = envd.logs(second.nextCursor(), 10);
        assertThat(after.firstAvailable()).isEqualTo(5);
        assertThat(after.entries()).extracting(EnvdLogEntry::message).containsExactly("line 5");
        assertThat(envd.logs(after.nextCursor(), 10).entries()).isEmpty();
        assertThat(envd.logs(after.nextCursor(), 10).nextCursor()).isEqualTo(after.nextCursor());
    }

    @Test
    void a_held_call_waits_at_its_gate_until_released() throws Exception {
        Gate gate = envd.holdNext(FakeEnvd.Call.METRICS);
        CompletableFuture<?> call = CompletableFuture.runAsync(() -> {
            try {
                envd.metrics();
            } catch (EnvdException e) {
                throw new IllegalStateException(e);
            }
        });
        gate.awaitEntered(Duration.ofSeconds(5));
        assertThat(call).isNotDone();
        gate.release();
        call.get(5, TimeUnit.SECONDS);
    }

    @Test
    void a_disconnected_fake_is_unreachable_and_scripted_failures_come_first() {
        envd.failNext(FakeEnvd.Call.HEALTH, new EnvdException.Rejected(500, "boom"));
        assertThatThrownBy(envd::health).isInstanceOf(EnvdException.Rejected.class);
        envd.disconnect();
        assertThatThrownBy(envd::processes).isInstanceOf(EnvdException.Unreachable.class);
    }

    @Test
    void a_mock_sandbox_initialises_its_own_envd_at_start_and_disconnects_it_when_paused() throws Exception {
        MockBackendFactory factory = new MockBackendFactory();
        SandboxId id = new SandboxId("a".repeat(SandboxId.LENGTH));
        LaunchSpec spec = new LaunchSpec(
                id, new TemplateId("base"), Map.of("A", "1"), "user", new AccessToken("secret"), NetworkPolicy.DEFAULT);
        SandboxBackend sandbox = factory.prepare(spec, new LaunchSource.Template(new TemplateId("base")));
        assertThat(sandbox.envd()).isEmpty();

        sandbox.start(Duration.ofSeconds(1));
        FakeEnvd fake = ((MockSandbox) sandbox).fakeEnvd();
        assertThat(sandbox.envd()).containsSame(fake);
        assertThat(fake.inits()).singleElement().satisfies(init -> {
            assertThat(init.envVars()).containsEntry("A", "1");
            assertThat(init.defaultUser()).contains("user");
        });
        assertThat(fake.token()).contains(new AccessToken("secret"));

        sandbox.pause(PauseMode.WITH_MEMORY, dir.resolve("paused"));
        assertThat(sandbox.envd()).isEmpty();
        assertThatThrownBy(fake::metrics).isInstanceOf(EnvdException.Unreachable.class);
    }
}
