package io.agentenv.images;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One local registry per test class, with {@link TestImages} pushed into it: started before the class's tests,
 * stopped (and its directory removed) after them. The images are pushed through a registry without auth on the same
 * storage; {@link Auth#HTPASSWD} and {@link Auth#TOKEN} then serve that storage with auth.
 */
final class RegistryExtension implements BeforeAllCallback, AfterAllCallback {

    enum Auth {
        NONE,
        HTPASSWD,
        TOKEN
    }

    static final String USER = "alice";
    static final String PASSWORD = "s3cret-Pa55word";

    private final Auth auth;
    private Path dir;
    private Path storage;
    private LocalRegistry registry;
    private TokenServer tokens;

    RegistryExtension(Auth auth) {
        this.auth = auth;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        HostTools.require();
        dir = Files.createTempDirectory("agentenv-images-test-");
        try {
            storage = Files.createDirectories(dir.resolve("storage"));
            LocalRegistry seed = new LocalRegistry(dir, storage, "");
            try {
                TestImages.pushAll(Files.createDirectories(dir.resolve("build")), seed.host());
            } finally {
                if (auth != Auth.NONE) {
                    seed.close();
                }
            }
            registry = switch (auth) {
                case NONE -> seed;
                case HTPASSWD -> {
                    String entry = Cmd.run(List.of("htpasswd", "-iBn", USER), PASSWORD);
                    Files.writeString(dir.resolve("htpasswd"), entry.strip() + "\n");
                    yield new LocalRegistry(
                            dir,
                            storage,
                            "auth:\n  htpasswd:\n    realm: agentenv-test\n    path: " + dir.resolve("htpasswd")
                                    + "\n");
                }
                case TOKEN -> {
                    tokens = new TokenServer(dir);
                    yield new LocalRegistry(
                            dir,
                            storage,
                            "auth:\n  token:\n    realm: " + tokens.realm() + "\n    service: " + TokenServer.SERVICE
                                    + "\n    issuer: " + TokenServer.ISSUER + "\n    rootcertbundle: "
                                    + dir.resolve("token.pem") + "\n");
                }
            };
        } catch (Exception | Error e) {
            afterAll(context);
            throw e;
        }
    }

    /** {@code 127.0.0.1:<port>} of the registry the tests pull from. */
    String host() {
        return registry.host();
    }

    /** The registry's storage directory (tests that break an image delete its blobs there). */
    Path storage() {
        return storage;
    }

    /** A scratch directory removed with the registry. */
    Path scratch(String name) throws Exception {
        return Files.createDirectories(dir.resolve("scratch").resolve(name));
    }

    TokenServer tokens() {
        return tokens;
    }

    /** A fresh store in this class's directory. */
    ImageStore store(String name, RegistrySettings settings, ToolRunner runner) throws Exception {
        return new ImageStore(dir.resolve("stores").resolve(name), settings, runner);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        try {
            if (registry != null) {
                registry.close();
            }
            if (tokens != null) {
                tokens.close();
            }
        } finally {
            if (dir != null) {
                ImageStore.deleteTree(dir);
            }
        }
    }

    /** A log that keeps its lines. */
    static final class Log implements Consumer<String> {
        final List<String> lines = new ArrayList<>();

        @Override
        public synchronized void accept(String line) {
            lines.add(line);
        }

        synchronized String all() {
            return String.join("\n", lines);
        }
    }
}
