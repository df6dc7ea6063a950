package io.agentenv.buildtools;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.regex.Pattern;

/**
 * Fails a build whose production jar holds build-time code: anything of this module ({@code io/agentenv/buildtools/}),
 * an AOT training driver (a class named {@code *Training*} under {@code io/agentenv/}), or a warm-up class outside
 * envd's own warm-up package ({@code io/agentenv/envd/warmup/}, which is production behaviour: every envd's deferred
 * set-ups and a template boot's request warm-up). Run by {@code mvn package} in agentenv-server and agentenv-envd right
 * after their jars are made: <pre>ProductionJarCheck &lt;jar&gt;...</pre>
 */
public final class ProductionJarCheck {
    private static final Pattern TRAINING = Pattern.compile("io/agentenv/.*Training[^/]*\\.class");
    private static final Pattern WARMUP = Pattern.compile("io/agentenv/.*(?i:warm-?up)[^/]*\\.class");
    private static final String WARMUP_PACKAGE = "io/agentenv/envd/warmup/";

    private ProductionJarCheck() {}

    public static void main(String[] args) throws IOException {
        if (args.length == 0) { // runs inside Maven's JVM (exec:java): no System.exit
            throw new IllegalArgumentException("usage: ProductionJarCheck <jar>...");
        }
        List<String> found = new ArrayList<>();
        for (String jar : args) {
            offending(Path.of(jar)).forEach(entry -> found.add(jar + "!/" + entry));
        }
        if (!found.isEmpty()) {
            throw new IllegalStateException(
                    "build-time classes in a production jar (they belong in agentenv-build-tools "
                            + "or in test scope): " + String.join(", ", found));
        }
        System.out.println("production jar check: no build-time classes in " + String.join(", ", args));
    }

    /** The entries of {@code jar} that must not ship. */
    static List<String> offending(Path jar) throws IOException {
        try (JarFile file = new JarFile(jar.toFile())) {
            return file.stream()
                    .map(e -> e.getName())
                    .filter(ProductionJarCheck::buildTime)
                    .sorted()
                    .toList();
        }
    }

    static boolean buildTime(String entry) {
        if (entry.startsWith("io/agentenv/buildtools/")
                || TRAINING.matcher(entry).matches()) {
            return true;
        }
        return WARMUP.matcher(entry).matches() && !entry.startsWith(WARMUP_PACKAGE);
    }
}
