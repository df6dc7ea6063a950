package io.agentenv.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class MainTest {
    @Test
    void the_backend_is_found_by_name_on_the_classpath() {
        // the mock backend's jar is on the test classpath and registers itself as a ServiceLoader provider
        assertThat(Main.loadBackend("mock").name()).isEqualTo("mock");
    }

    @Test
    void an_unknown_backend_name_fails_listing_the_available_ones() {
        assertThatThrownBy(() -> Main.loadBackend("firecracker"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no sandbox backend named 'firecracker'")
                .hasMessageContaining("available: ")
                .hasMessageContaining("mock");
    }
}
