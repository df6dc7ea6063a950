package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.spi.TemplateDescriptor;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** What the backend reports about its built-in templates (the API's GET /templates shows it). */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerTemplatesHostTest {

    @Test
    void base_reports_its_resources_and_when_its_current_build_was_linked() throws Exception {
        try (BackendFixture backend = BackendFixture.create(Map.of())) {
            TemplateDescriptor base = backend.factory.templates().stream()
                    .filter(t -> t.id().value().equals("base")).findFirst().orElseThrow();
            Path current = HostLayout.load(HostLayout.DEFAULT_HOST_ENV).templatesDir().resolve("base").resolve("current");

            assertThat(base.builtAt()).contains(Files.getLastModifiedTime(current, LinkOption.NOFOLLOW_LINKS).toInstant());
            assertThat(base.resources().cpuCount()).isEqualTo(1); // the fixture's cpu_count
            assertThat(base.resources().memoryMiB()).isEqualTo(256);
            assertThat(base.resources().diskSizeMiB()).isGreaterThanOrEqualTo(1024);
            backend.assertNothingLeaked();
        }
    }
}
