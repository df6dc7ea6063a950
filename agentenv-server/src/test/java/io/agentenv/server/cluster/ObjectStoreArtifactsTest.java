package io.agentenv.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.objectstore.FileSystemObjectStore;
import io.agentenv.spi.SharedFiles;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ObjectStoreArtifactsTest {

    @TempDir
    Path tmp;

    @Test
    void the_backends_files_round_trip_apart_from_the_orchestrators_artifacts() throws Exception {
        Path tree = Files.createDirectories(tmp.resolve("layer/usr/bin"));
        Files.writeString(tree.resolve("tool"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(tree.resolve("tool"), PosixFilePermissions.fromString("rwxr-x---"));
        Files.createSymbolicLink(tmp.resolve("layer/link"), Path.of("usr/bin/tool"));
        try (ObjectStoreArtifacts artifacts = new ObjectStoreArtifacts(
                new FileSystemObjectStore(Files.createDirectories(tmp.resolve("store"))), tmp.resolve("spool"))) {
            SharedFiles files = artifacts.backendFiles();

            assertThat(files.contains("k1")).isFalse();
            files.put("k1", tmp.resolve("layer"));
            files.get("k1", tmp.resolve("copy"));

            assertThat(files.contains("k1")).isTrue();
            assertThat(Files.readString(tmp.resolve("copy/usr/bin/tool"))).isEqualTo("#!/bin/sh\n");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tmp.resolve("copy/usr/bin/tool"))))
                    .isEqualTo("rwxr-x---");
            assertThat(Files.readSymbolicLink(tmp.resolve("copy/link"))).isEqualTo(Path.of("usr/bin/tool"));
            assertThatThrownBy(() -> artifacts.get("k1", tmp.resolve("not-an-artifact")))
                    .as("the orchestrator's keys are apart")
                    .isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> files.get("k2", tmp.resolve("missing"))).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> files.contains("../artifacts")).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
