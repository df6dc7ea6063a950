package io.agentenv.orchestrator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives each test a fresh default {@link OrchestratorHarness} on its own temporary directory: declare a parameter of
 * that type on a {@code @BeforeEach} or {@code @Test} method. After the test (and after its {@code @AfterEach} methods)
 * the harness is shut down, which fails the test if the mock backend saw a leak or a contract violation, and the
 * directory is deleted. Tests that need another harness (a wrapped store, hooks, a short transition wait) build their
 * own.
 */
final class OrchestratorExtension implements ParameterResolver, AfterEachCallback {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(OrchestratorExtension.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == OrchestratorHarness.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return store(context)
                .computeIfAbsent(
                        OrchestratorHarness.class,
                        key -> {
                            try {
                                return new OrchestratorHarness(Files.createTempDirectory("orchestrator-test"));
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                        },
                        OrchestratorHarness.class);
    }

    @Override
    public void afterEach(ExtensionContext context) throws IOException {
        OrchestratorHarness harness = store(context).remove(OrchestratorHarness.class, OrchestratorHarness.class);
        if (harness == null) {
            return;
        }
        try {
            harness.close();
        } finally {
            delete(harness.dir);
        }
    }

    /** The test method's store: a harness resolved for {@code @BeforeEach} is the one the test gets. */
    private static ExtensionContext.Store store(ExtensionContext context) {
        return context.getStore(NAMESPACE);
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
