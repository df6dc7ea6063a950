package io.agentenv.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.spi.SandboxId;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A create that returned survives the server's SIGKILL: the store is durable before the answer, cache or not. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class StoreCrashTest {
    @TempDir
    Path dir;

    @Test
    void every_create_that_returned_is_running_after_the_process_is_killed_with_sigkill() throws Exception {
        // given a process that created 20 sandboxes at once (group commit, cached statements) and is still running
        Path db = dir.resolve("agentenv.db");
        Process child = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        // stdout carries the ids: logback's own start-up status lines must not appear there
                        "-Dlogback.statusListenerClass=ch.qos.logback.core.status.NopStatusListener",
                        StoreCrashChild.class.getName(),
                        db.toString(),
                        "20")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        List<SandboxId> created;
        try {
            created = CompletableFuture.supplyAsync(() -> readIds(child)).get(60, TimeUnit.SECONDS);
        } finally {
            // when it is killed (SIGKILL: no shutdown hook, no close)
            child.destroyForcibly();
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }

        // then every create that returned is there, RUNNING
        assertThat(created).hasSize(20);
        try (SqliteSandboxStore store = SqliteSandboxStore.open(db)) {
            assertThat(store.all()).extracting(SandboxRecord::id).containsExactlyInAnyOrderElementsOf(created);
            assertThat(store.all()).extracting(SandboxRecord::state).containsOnly(SandboxState.RUNNING);
        }
    }

    private static List<SandboxId> readIds(Process child) {
        List<SandboxId> ids = new ArrayList<>();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) {
                if (line.equals("ready")) {
                    return ids;
                }
                ids.add(new SandboxId(line));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("the child exited before it was ready; ids so far: " + ids);
    }
}
