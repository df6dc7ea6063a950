package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.GuestProcesses;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.SandboxMeter;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.TemplateId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The host's reading of a real sandbox ({@code hostMetrics}, {@link SandboxMeter}) against envd's {@code /metrics}
 * inside it: the same limits exactly, usage close while idle, and a CPU burner and a memory hog move both alike.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SandboxMeterHostTest {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Duration READY = Duration.ofSeconds(60);
    private static final TemplateId BASE = new TemplateId("base");
    private static final long MIB = 1 << 20;
    /** Three quarters of the hog's 128 MiB: what both readings must add over the baseline. */
    private static final long HOG_SEEN = 96 * MIB;

    @SharedBackend(settings = {"cpu_count=2", "memory_mb=512", "disk_mb=1024"})
    private static BackendFixture backend;

    private SandboxBackend sandbox;

    @AfterEach
    void closeOpened() throws Exception { // then SharedBackend checks for leaks
        if (sandbox != null) {
            sandbox.close();
        }
    }

    @Test
    void the_host_reading_has_envds_limits_exactly_and_close_usage_while_idle() throws Exception {
        LaunchSpec spec = BackendFixture.baseSpec();
        sandbox = start(spec);
        EnvdApi envd = sandbox.envd().orElseThrow();

        EnvdMetrics inside = envd.metrics();
        EnvdMetrics host = sandbox.hostMetrics().orElseThrow();

        assertThat(host.cpuCount()).isEqualTo(inside.cpuCount()).isEqualTo(2);
        assertThat(host.memTotal()).isEqualTo(inside.memTotal()).isEqualTo(512 * MIB);
        assertThat(host.diskTotal()).isEqualTo(inside.diskTotal());
        assertThat(host.diskUsed()).isCloseTo(inside.diskUsed(), offset(4 * MIB));
        assertThat(host.memUsed()).isCloseTo(inside.memUsed(), offset(16 * MIB));
        assertThat(host.memCache()).isCloseTo(inside.memCache(), offset(16 * MIB));
        assertThat(host.timestamp())
                .isBetween(inside.timestamp(), inside.timestamp().plusSeconds(5));
        // idle for a second (a blocking `sleep 1`): neither sees much CPU use, and they agree
        exec(spec, "sleep", "1");
        EnvdMetrics hostIdle = sandbox.hostMetrics().orElseThrow();
        EnvdMetrics insideIdle = envd.metrics();
        assertThat(hostIdle.cpuUsedPct()).isLessThan(25.0).isCloseTo(insideIdle.cpuUsedPct(), offset(10.0));
        assertThat(insideIdle.cpuUsedPct()).isLessThan(25.0);

        exec(spec, "dd", "if=/dev/zero", "of=/home/user/file", "bs=1M", "count=64", "conv=fsync");
        EnvdMetrics insideAfter = envd.metrics();
        EnvdMetrics hostAfter = sandbox.hostMetrics().orElseThrow();
        assertThat(hostAfter.diskUsed())
                .isGreaterThanOrEqualTo(host.diskUsed() + 60 * MIB)
                .isCloseTo(insideAfter.diskUsed(), offset(4 * MIB));
    }

    @Test
    void a_cpu_burner_and_a_memory_hog_move_the_host_reading_as_they_move_envds() throws Exception {
        LaunchSpec spec = BackendFixture.baseSpec();
        sandbox = start(spec);
        EnvdApi envd = sandbox.envd().orElseThrow();
        EnvdMetrics idle = sandbox.hostMetrics().orElseThrow();
        envd.metrics(); // both measure CPU from here on

        exec(spec, "sh", "-c", "timeout 3 sh -c 'while :; do :; done'; true"); // one CPU of two, for 3 s
        EnvdMetrics hostBurnt = sandbox.hostMetrics().orElseThrow();
        EnvdMetrics insideBurnt = envd.metrics();
        // up to 50 % (one CPU of two); less when the host is busy with other work
        assertThat(hostBurnt.cpuUsedPct()).as("host").isBetween(10.0, 60.0);
        assertThat(insideBurnt.cpuUsedPct()).as("envd").isBetween(10.0, 60.0);
        assertThat(hostBurnt.cpuUsedPct()).isCloseTo(insideBurnt.cpuUsedPct(), offset(15.0));

        // the baseline: the lower of the two readings without the hog (the first one, right after the start, can hold
        // memory the sandbox gives back later: 54 MiB then 44 MiB was seen, which left a 128 MiB hog at +112 MiB)
        long before =
                Math.min(idle.memUsed(), sandbox.hostMetrics().orElseThrow().memUsed());
        // dd's 128 MiB buffer is filled from /dev/zero, then dd blocks writing to a pipe nobody reads
        GuestProcesses.start(
                sandbox.guest().orElseThrow(),
                spec.accessToken(),
                "user",
                "sh",
                List.of("-c", "dd if=/dev/zero bs=128M count=1 2>/dev/null | sleep 100000"));
        AtomicReference<EnvdMetrics> hog = new AtomicReference<>();
        HostFixture.await("the host sees the memory hog", Duration.ofSeconds(20), () -> {
            try {
                hog.set(sandbox.hostMetrics().orElseThrow());
            } catch (BackendException e) {
                throw new IllegalStateException(e);
            }
            return hog.get().memUsed() >= before + HOG_SEEN;
        });
        // compared with a host reading taken right after envd's: the one that saw the hog can be from before dd had
        // filled its whole buffer (28 MiB apart was seen)
        EnvdMetrics insideHog = envd.metrics();
        long hostAfter = sandbox.hostMetrics().orElseThrow().memUsed();
        assertThat(insideHog.memUsed())
                .as("envd sees it too")
                .isGreaterThanOrEqualTo(before + HOG_SEEN)
                .isCloseTo(hostAfter, offset(16 * MIB));
    }

    @Test
    void a_paused_sandbox_has_no_host_reading() throws Exception {
        LaunchSpec spec = BackendFixture.baseSpec();
        sandbox = start(spec);
        Path artifacts = backend.workDir.resolve("artifacts-" + Long.toHexString(RANDOM.nextLong()));
        Files.createDirectories(artifacts.getParent());
        sandbox.pause(PauseMode.WITH_MEMORY, artifacts);
        assertThat(sandbox.hostMetrics()).isEmpty();
        sandbox.close();
        FileTrees.deleteTree(artifacts);
    }

    private static SandboxBackend start(LaunchSpec spec) throws BackendException {
        SandboxBackend started = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
        try {
            started.start(READY);
            return started;
        } catch (BackendException | RuntimeException e) {
            started.close();
            throw e;
        }
    }

    private static String exec(LaunchSpec spec, String... args) throws Exception {
        return backend.exec(spec.id(), args);
    }
}
