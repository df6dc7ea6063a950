package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateImagesFingerprintTest {
    @TempDir
    Path root;
    private Path envd;
    private Path jdk;

    @BeforeEach
    void distributions() throws Exception {
        envd = Files.createDirectories(root.resolve("envd"));
        jdk = Files.createDirectories(root.resolve("jdk"));
        write(envd.resolve("agentenv-envd.jar"), "jar v1");
        write(envd.resolve("jvm.options"), "-Xmx48m");
        write(envd.resolve("envd.aot"), "aot v1");
        write(Files.createDirectories(envd.resolve("lib")).resolve("jetty.jar"), "jetty");
        write(Files.createDirectories(jdk.resolve("lib/server")).resolve("libjvm.so"), "libjvm");
        write(jdk.resolve("lib/modules"), "modules");
    }

    @Test
    void the_same_files_give_the_same_fingerprint() throws Exception {
        assertThat(TemplateImages.fingerprint(envd, jdk)).isEqualTo(TemplateImages.fingerprint(envd, jdk));
    }

    @Test
    void a_rebuilt_envd_in_the_same_dir_gets_a_new_boot_image() throws Exception {
        String before = TemplateImages.fingerprint(envd, jdk);

        write(envd.resolve("envd.aot"), "aot v2, recorded again");

        assertThat(TemplateImages.fingerprint(envd, jdk)).isNotEqualTo(before);
    }

    @Test
    void a_library_jar_replaced_with_one_of_the_same_size_still_counts() throws Exception {
        String before = TemplateImages.fingerprint(envd, jdk);

        write(envd.resolve("lib/jetty.jar"), "JETTY");
        Files.setLastModifiedTime(envd.resolve("lib/jetty.jar"), FileTime.from(Instant.parse("2030-01-01T00:00:00Z")));

        assertThat(TemplateImages.fingerprint(envd, jdk)).isNotEqualTo(before);
    }

    @Test
    void an_updated_jdk_gets_a_new_boot_image() throws Exception {
        String before = TemplateImages.fingerprint(envd, jdk);

        write(jdk.resolve("lib/server/libjvm.so"), "libjvm, patched");

        assertThat(TemplateImages.fingerprint(envd, jdk)).isNotEqualTo(before);
    }

    private static void write(Path file, String text) throws Exception {
        Files.writeString(file, text);
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-01-01T00:00:00Z")));
    }
}
