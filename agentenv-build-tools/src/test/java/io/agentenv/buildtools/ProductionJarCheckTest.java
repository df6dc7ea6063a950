package io.agentenv.buildtools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ProductionJarCheckTest {
    @TempDir
    Path dir;

    @Test
    void production_classes_and_envd_warmup_package_pass() throws IOException {
        Path jar = jar(
                "ok.jar",
                "META-INF/MANIFEST.MF",
                "io/agentenv/server/Main.class",
                "io/agentenv/server/proxy/SandboxProxy.class",
                "io/agentenv/envd/Main.class",
                "io/agentenv/envd/warmup/RequestPathWarmup.class",
                "io/agentenv/envd/warmup/DeferredSetUps.class",
                "io/agentenv/envd/warmup/JitSettling$Result.class",
                "com/example/Training.class");

        assertThat(ProductionJarCheck.offending(jar)).isEmpty();
        ProductionJarCheck.main(new String[] {jar.toString()});
    }

    @Test
    void training_drivers_build_tools_and_stray_warmups_are_named() throws IOException {
        Path jar = jar(
                "bad.jar",
                "io/agentenv/server/Main.class",
                "io/agentenv/server/AotTraining.class",
                "io/agentenv/server/AotTraining$Workload.class",
                "io/agentenv/envd/AotTraining.class",
                "io/agentenv/buildtools/EnvdAotTraining.class",
                "io/agentenv/envd/RequestPathWarmup.class",
                "io/agentenv/server/ServerWarmUp.class");

        assertThat(ProductionJarCheck.offending(jar))
                .containsExactly(
                        "io/agentenv/buildtools/EnvdAotTraining.class",
                        "io/agentenv/envd/AotTraining.class",
                        "io/agentenv/envd/RequestPathWarmup.class",
                        "io/agentenv/server/AotTraining$Workload.class",
                        "io/agentenv/server/AotTraining.class",
                        "io/agentenv/server/ServerWarmUp.class");
        assertThatThrownBy(() -> ProductionJarCheck.main(new String[] {jar.toString()}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("bad.jar!/io/agentenv/envd/AotTraining.class");
    }

    private Path jar(String name, String... entries) throws IOException {
        Path jar = dir.resolve(name);
        try (OutputStream file = Files.newOutputStream(jar);
                JarOutputStream out = new JarOutputStream(file)) {
            for (String entry : List.of(entries)) {
                out.putNextEntry(new JarEntry(entry));
                out.write(new byte[] {(byte) 0xca, (byte) 0xfe});
                out.closeEntry();
            }
        }
        return jar;
    }
}
