package io.agentenv.images;

import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;

/**
 * The programs the host tests need (scripts/setup-host.sh installs them). Without them the tests are skipped with
 * the reason, or fail when host tests are required (AENV_REQUIRE_HOST_TESTS=1, set by scripts/test.sh).
 */
final class HostTools {

    static final List<String> PROGRAMS = List.of("skopeo", "umoci", "docker-registry", "busybox", "htpasswd");

    private HostTools() {}

    static void require() {
        Optional<String> missing = missing();
        if (missing.isPresent()) {
            if ("1".equals(System.getenv("AENV_REQUIRE_HOST_TESTS"))) {
                fail("host tests are required but " + missing.get());
            }
            Assumptions.abort("host test skipped: " + missing.get());
        }
    }

    static Optional<String> missing() {
        List<String> absent = new ArrayList<>();
        for (String program : PROGRAMS) {
            if (which(program).isEmpty()) {
                absent.add(program);
            }
        }
        return absent.isEmpty()
                ? Optional.empty()
                : Optional.of("not on PATH: " + String.join(", ", absent) + " (scripts/setup-host.sh installs them)");
    }

    static Optional<Path> which(String program) {
        String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
