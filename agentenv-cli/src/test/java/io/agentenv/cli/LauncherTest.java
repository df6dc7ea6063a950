package io.agentenv.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/aenv, the launcher: it finds a JDK 25 whatever java the PATH and JAVA_HOME name, runs the jar with
 * agentenv-cli/jvm.options, and adds the AOT cache only when it is newer than the jar. The jar it runs here is a stand-in
 * ({@link ShowJvm}) that prints the JVM's feature version and options.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LauncherTest {
    private static final Path LAUNCHER =
            Path.of("..", "bin", "aenv").toAbsolutePath().normalize();
    private static final String JAVA_17 = "/usr/lib/jvm/java-17-openjdk-amd64";

    @TempDir
    Path dir;

    private Path jar;

    /** The stand-in for aenv.jar: prints {@code feature=N} and the JVM's input arguments, one per line. */
    public static final class ShowJvm {
        public static void main(String[] args) {
            System.out.println("feature=" + Runtime.version().feature());
            ManagementFactory.getRuntimeMXBean().getInputArguments().forEach(System.out::println);
            System.out.println("args=" + String.join(" ", args));
        }
    }

    @BeforeEach
    void buildJar() throws IOException {
        jar = dir.resolve("aenv.jar");
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, ShowJvm.class.getName());
        String entry = ShowJvm.class.getName().replace('.', '/') + ".class";
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest);
                InputStream in = ShowJvm.class.getClassLoader().getResourceAsStream(entry)) {
            out.putNextEntry(new JarEntry(entry));
            in.transferTo(out);
        }
    }

    @Test
    void it_runs_the_jar_on_a_jdk_25_when_java_and_java_home_are_older() throws Exception {
        String out = launch(Map.of("PATH", "/usr/bin:/bin", "JAVA_HOME", JAVA_17), "list", "-o", "json");

        assertThat(out)
                .contains("feature=25")
                .contains("-XX:+UseSerialGC")
                .contains("-XX:TieredStopAtLevel=1")
                .contains("args=list -o json");
    }

    @Test
    void the_aot_cache_is_used_only_when_it_is_newer_than_the_jar() throws Exception {
        Path cache = dir.resolve("aenv.aot");
        Files.writeString(cache, "not a cache: the JVM must say nothing about it");
        Files.setLastModifiedTime(cache, FileTime.from(Instant.now().minusSeconds(60)));

        assertThat(launch(Map.of("PATH", "/usr/bin:/bin"))).doesNotContain("AOTCache");

        Files.setLastModifiedTime(cache, FileTime.from(Instant.now().plusSeconds(60)));
        String out = launch(Map.of("PATH", "/usr/bin:/bin"));
        assertThat(out)
                .contains("-XX:AOTCache=" + cache)
                .contains("feature=25")
                .doesNotContain("[aot]")
                .doesNotContain("error");
    }

    /** Runs the launcher with only this environment; returns stdout and stderr, after checking it exited 0. */
    private String launch(Map<String, String> env, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(LAUNCHER.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().putAll(env);
        builder.environment().put("AENV_JAR", jar.toString());
        Process process = builder.start();
        try (OutputStream stdin = process.getOutputStream()) {
            // no input
        }
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(out).isZero();
        return out;
    }
}
