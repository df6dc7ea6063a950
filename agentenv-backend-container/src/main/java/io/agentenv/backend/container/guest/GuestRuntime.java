package io.agentenv.backend.container.guest;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ProcessRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What envd needs inside a sandbox that an image cannot be trusted to have, taken from the host: a static {@code tini}
 * as the init, a static {@code busybox} as the shell of the init and of envd's shell fallback, and the glibc loader
 * and the libraries the JDK links against. envd's JVM is started through that loader with that library path, so it
 * runs the same on Debian, on musl images (Alpine), on distroless images and on images without any shell; the
 * image's own loader and libraries are used only by the image's programs.
 *
 * <p>The files sit in {@link #DIR} of envd's private copy, which every sandbox binds read-only at
 * {@link EnvdLayout#ENVD_DIST}.
 */
public final class GuestRuntime {
    /** The runtime's directory inside envd's distribution. */
    public static final String DIR = "runtime";

    private static final String GUEST = EnvdLayout.ENVD_DIST + "/" + DIR;
    /** The static init. */
    public static final String TINI = GUEST + "/bin/tini";
    /** The static POSIX shell (busybox; its applets stand in for the usual tools inside it). */
    public static final String SHELL = GUEST + "/bin/sh";
    /** The library directory the JVM's loader searches first. */
    public static final String LIB = GUEST + "/lib";
    /** The glibc loader the JVM is started through. */
    public static final String LOADER = LIB + "/ld-linux-x86-64.so.2";
    /**
     * The loader under the name {@code java} (a link to it): a program's process name is the name it was started by,
     * so envd's process is {@code java} as with the JDK's own launcher ({@code pgrep -x java}, the liveness checks).
     */
    public static final String JAVA = GUEST + "/bin/java";

    /** The JDK's files envd loads (a JVM, its launcher and the libraries of the modules envd uses). */
    private static final List<String> JDK_BINARIES = List.of(
            "bin/java",
            "lib/libjli.so",
            "lib/server/libjvm.so",
            "lib/libjava.so",
            "lib/libjimage.so",
            "lib/libnio.so",
            "lib/libnet.so",
            "lib/libzip.so",
            "lib/libextnet.so",
            "lib/libsyslookup.so",
            "lib/libmanagement.so",
            "lib/libmanagement_ext.so",
            "lib/libverify.so");

    private static final Pattern RESOLVED = Pattern.compile("^\\s*(\\S+)\\s+=>\\s+(/\\S+)\\s+\\(0x[0-9a-f]+\\)$");
    private static final Pattern LOADER_LINE =
            Pattern.compile("^\\s*(/\\S*ld-linux-x86-64\\.so\\.2)\\s+\\(0x[0-9a-f]+\\)$");

    /** Where the runtime's files come from on the host. */
    public record Sources(Path tini, Path busybox) {
        public Sources {
            requireNonNull(tini, "tini is null");
            requireNonNull(busybox, "busybox is null");
        }

        /** Debian's {@code tini} and {@code busybox-static} packages. */
        public static final Sources DEBIAN = new Sources(Path.of("/usr/bin/tini-static"), Path.of("/bin/busybox"));
    }

    private final ProcessRunner runner;
    private final Path jdkHome;
    private final Sources sources;
    /** {@link #files()}, found once. */
    private volatile Map<String, Path> files;

    public GuestRuntime(ProcessRunner runner, Path jdkHome, Sources sources) {
        this.runner = requireNonNull(runner, "runner is null");
        this.jdkHome = requireNonNull(jdkHome, "jdkHome is null");
        this.sources = requireNonNull(sources, "sources is null");
    }

    /**
     * The host files the runtime is made of, by name in the runtime: a program is missing or not static, or the JDK's
     * libraries cannot be resolved, is an IOException naming what to install.
     */
    public Map<String, Path> files() throws IOException, InterruptedException {
        Map<String, Path> found = files;
        if (found == null) {
            found = findFiles();
            files = found;
        }
        return found;
    }

    /** One ldd of every JDK file envd loads (ldd takes them all at once) and one of each static program. */
    private Map<String, Path> findFiles() throws IOException, InterruptedException {
        Map<String, Path> found = new LinkedHashMap<>();
        found.put("bin/tini", requireStatic(sources.tini(), "tini (Debian package tini: tini-static)"));
        found.put("bin/busybox", requireStatic(sources.busybox(), "busybox (Debian package busybox-static)"));
        List<String> binaries = JDK_BINARIES.stream()
                .map(jdkHome::resolve)
                .filter(Files::exists)
                .map(Path::toString)
                .toList();
        Optional<Path> loader = Optional.empty();
        for (String line : ldd(binaries).split("\n")) {
            Matcher resolved = RESOLVED.matcher(line);
            Matcher interpreter = LOADER_LINE.matcher(line);
            if (resolved.matches() && !Path.of(resolved.group(2)).normalize().startsWith(jdkHome.normalize())) {
                found.putIfAbsent("lib/" + resolved.group(1), Path.of(resolved.group(2)));
            } else if (interpreter.matches()) {
                loader = Optional.of(Path.of(interpreter.group(1)));
            } else if (line.contains("=> not found") && !line.contains("libjvm.so")) {
                throw new IOException("the JDK at " + jdkHome + " needs a library this host lacks: " + line.trim());
            }
        }
        found.put(
                "lib/ld-linux-x86-64.so.2",
                loader.orElseThrow(() -> new IOException("no glibc loader found for the JDK at " + jdkHome)));
        return Collections.unmodifiableMap(found); // in order: the fingerprint lists them so
    }

    /**
     * Copies the runtime into {@code target} (a new directory): the files of {@link #files()}, symlinks resolved,
     * {@code bin/sh} naming busybox and {@code bin/java} naming the loader.
     */
    public void assemble(Path target) throws IOException, InterruptedException {
        Files.createDirectories(target.resolve("bin"));
        Files.createDirectories(target.resolve("lib"));
        for (Map.Entry<String, Path> file : files().entrySet()) {
            Path to = target.resolve(file.getKey());
            Files.copy(file.getValue().toRealPath(), to);
            if (!to.toFile().setExecutable(true, false) || !to.toFile().setReadable(true, false)) {
                throw new IOException("cannot make " + to + " readable and executable");
            }
        }
        Files.createSymbolicLink(target.resolve("bin/sh"), Path.of("busybox"));
        Files.createSymbolicLink(target.resolve("bin/java"), Path.of("../lib/ld-linux-x86-64.so.2"));
    }

    /** A line per source file (name, size, mtime): what makes a new copy of the runtime necessary when it changes. */
    public String fingerprint() throws IOException, InterruptedException {
        StringBuilder text = new StringBuilder();
        for (Map.Entry<String, Path> file : files().entrySet()) {
            Path real = file.getValue().toRealPath();
            text.append(file.getKey())
                    .append(' ')
                    .append(real)
                    .append(' ')
                    .append(Files.size(real))
                    .append(' ')
                    .append(Files.getLastModifiedTime(real).toMillis())
                    .append('\n');
        }
        return text.toString();
    }

    private Path requireStatic(Path program, String what) throws IOException, InterruptedException {
        if (!Files.isExecutable(program)) {
            throw new IOException("no " + what + " at " + program + " (run scripts/setup-host.sh)");
        }
        String out = ldd(List.of(program.toString()));
        if (!out.contains("not a dynamic executable") && !out.contains("statically linked")) {
            throw new IOException(program + " is not statically linked: install " + what);
        }
        return program;
    }

    /** ldd's report on {@code files}, also when it exits non-zero (it does for a static program). */
    private String ldd(List<String> files) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of("ldd"));
        argv.addAll(files);
        try {
            return runner.run(Command.of(Duration.ofSeconds(30), argv)).stdout();
        } catch (CommandFailedException e) {
            return e.getMessage();
        }
    }
}
