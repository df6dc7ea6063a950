package io.agentenv.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The build step that makes picocli's Java 5 class files current (so that the AOT cache can hold them). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ClassFileUpgradeTest {
    @Test
    void picocli_rewritten_is_all_current_class_files_that_load_verify_and_parse_a_line(@TempDir Path dir)
            throws Exception {
        Path picocli = Path.of(picocli.CommandLine.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        Path out = dir.resolve("picocli.jar");

        int count = ClassFileUpgrade.upgrade(picocli, out, "picocli/");

        assertThat(count).isGreaterThan(100);
        try (ZipFile before = new ZipFile(picocli.toFile());
                ZipFile after = new ZipFile(out.toFile())) {
            List<String> names = Collections.list(before.entries()).stream()
                    .map(e -> e.getName())
                    .toList();
            assertThat(Collections.list(after.entries()).stream()
                            .map(e -> e.getName())
                            .toList())
                    .isEqualTo(names);
            assertThat(major(after, "picocli/CommandLine.class")).isEqualTo(ClassFile.latestMajorVersion());
            assertThat(major(before, "picocli/CommandLine.class")).isLessThan(50);
        }
        // a loader of its own, verifying every class it loads (the default for classes not on the boot path)
        try (URLClassLoader loader =
                new URLClassLoader(new URL[] {out.toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
            Class<?> commandLine = Class.forName("picocli.CommandLine", true, loader);
            assertThat(commandLine.getClassLoader()).isSameAs(loader);
            Class<?> spec = Class.forName("picocli.CommandLine$Model$CommandSpec", true, loader);
            Object command = spec.getMethod("create").invoke(null);
            Class<?> option = Class.forName("picocli.CommandLine$Model$OptionSpec", true, loader);
            Object builder = option.getMethod("builder", String[].class).invoke(null, (Object) new String[] {"--name"});
            java.lang.reflect.Method arity = builder.getClass().getMethod("arity", String.class);
            arity.setAccessible(true); // declared by a non-public superclass
            arity.invoke(builder, "1");
            spec.getMethod("addOption", option)
                    .invoke(command, builder.getClass().getMethod("build").invoke(builder));
            Object cli = commandLine.getConstructor(Object.class).newInstance(command);
            Object parsed = commandLine.getMethod("parseArgs", String[].class).invoke(cli, (Object)
                    new String[] {"--name", "x"});
            Object value = parsed.getClass()
                    .getMethod("matchedOptionValue", String.class, Object.class)
                    .invoke(parsed, "--name", "none");
            assertThat(value).isEqualTo("x");
        }
    }

    private static int major(ZipFile jar, String entry) throws IOException {
        byte[] bytes = jar.getInputStream(jar.getEntry(entry)).readNBytes(8);
        return ((bytes[6] & 0xff) << 8) | (bytes[7] & 0xff);
    }
}
