package io.agentenv.images;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RegistrySettingsTest {

    @Test
    void a_mapped_registry_is_pulled_from_its_mirror_and_others_from_themselves() {
        RegistrySettings settings = RegistrySettings.parse("docker.io=mirror.internal:5000, ghcr.io=m2", "");

        assertThat(settings.endpoint("docker.io")).isEqualTo("mirror.internal:5000");
        assertThat(settings.endpoint("ghcr.io")).isEqualTo("m2");
        assertThat(settings.endpoint("quay.io")).isEqualTo("quay.io");
    }

    @Test
    void loopback_registries_and_listed_ones_may_use_plain_http() {
        RegistrySettings settings = RegistrySettings.parse("", "registry.lan:5000");

        assertThat(settings.plainHttpAllowed("127.0.0.1:5000")).isTrue();
        assertThat(settings.plainHttpAllowed("127.255.3.4")).isTrue();
        assertThat(settings.plainHttpAllowed("localhost:80")).isTrue();
        assertThat(settings.plainHttpAllowed("[::1]:5000")).isTrue();
        assertThat(settings.plainHttpAllowed("Registry.LAN:5000")).isTrue();
        assertThat(settings.plainHttpAllowed("registry.lan")).isFalse();
        assertThat(settings.plainHttpAllowed("docker.io")).isFalse();
        assertThat(settings.plainHttpAllowed("127.0.0.1.example.com")).isFalse();
        assertThat(settings.plainHttpAllowed("localhost.example.com")).isFalse();
    }

    @Test
    void default_credentials_are_found_by_host_and_their_password_is_hidden() {
        RegistryAuth auth = new RegistryAuth("bob", "hunter22");
        RegistrySettings settings = RegistrySettings.defaults().withCredentials("Reg.io", auth);

        assertThat(settings.credentialsFor("reg.io")).contains(auth);
        assertThat(settings.credentialsFor("other.io")).isEmpty();
        assertThat(settings.toString()).doesNotContain("hunter22");
        assertThat(auth.toString()).doesNotContain("hunter22").contains("bob");
    }

    @Test
    void malformed_mirrors_and_credentials_are_rejected() {
        assertThatThrownBy(() -> RegistrySettings.parse("docker.io", "")).hasMessageContaining("registry=mirror");
        assertThatThrownBy(() -> RegistrySettings.parse("docker.io=", "")).hasMessageContaining("registry=mirror");
        assertThatThrownBy(() -> new RegistrySettings(Map.of("docker.io", "bad host"), Set.of(), Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RegistryAuth("a:b", "p")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RegistryAuth("a", "")).isInstanceOf(IllegalArgumentException.class);
    }
}
