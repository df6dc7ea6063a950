package io.agentenv.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SandboxBackendFactoryTest {
    private static final Resources RESOURCES = new Resources(1, 256, 1024);

    /** A backend that only lists templates (what the default lookup works from). */
    private record Listing(List<TemplateDescriptor> templates) implements SandboxBackendFactory {
        @Override
        public String name() {
            return "listing";
        }

        @Override
        public SandboxBackend prepare(LaunchSpec spec, LaunchSource source) throws BackendException {
            throw new BackendException.Recoverable("not launched in this test");
        }

        @Override
        public PausedState decodePausedState(byte[] encoded, Path artifactDir) throws BackendException {
            throw new BackendException.Recoverable("not decoded in this test");
        }

        @Override
        public SnapshotState decodeSnapshotState(byte[] encoded, Path artifactDir) throws BackendException {
            throw new BackendException.Recoverable("not decoded in this test");
        }
    }

    @Test
    void the_default_lookup_by_id_finds_the_listed_template_and_nothing_for_another_id() {
        TemplateDescriptor base = new TemplateDescriptor(new TemplateId("base"), RESOURCES);
        TemplateDescriptor python = new TemplateDescriptor(new TemplateId("python"), new Resources(2, 512, 2048));
        SandboxBackendFactory factory = new Listing(List.of(base, python));

        assertThat(factory.template(new TemplateId("python"))).contains(python);
        assertThat(factory.template(new TemplateId("base"))).contains(base);
        assertThat(factory.template(new TemplateId("node"))).isEmpty();
    }

    @Test
    void a_backend_without_ready_instances_reserves_nothing_so_a_create_picks_its_own_id() {
        SandboxBackendFactory factory = new Listing(List.of(new TemplateDescriptor(new TemplateId("base"), RESOURCES)));

        assertThat(factory.reserve(new TemplateId("base"))).isEmpty();
    }

    @Test
    void a_context_built_without_the_token_derivation_has_none() {
        BackendContext context = new BackendContext(Path.of("/tmp/work"), Map.of("pool_size", "2"));

        assertThat(context.envdTokens()).isEmpty();
        assertThat(context.setting("pool_size")).contains("2");
    }
}
