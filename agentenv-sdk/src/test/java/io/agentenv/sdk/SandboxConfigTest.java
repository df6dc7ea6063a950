package io.agentenv.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** URLs, key and debug mode are resolved from options and environment variables as E2B's SDKs resolve them. */
class SandboxConfigTest {

    @Test
    void withoutSettingsTheApiIsE2bsAndSandboxesAreOnTheSharedHost() {
        SandboxConfig c = SandboxConfig.builder(Map.of()).build();
        assertThat(c.apiUrl()).isEqualTo(URI.create("https://api.e2b.app"));
        assertThat(c.apiKey()).isEmpty();
        assertThat(c.debug()).isFalse();
        assertThat(c.envdUrl("abc", Optional.empty())).isEqualTo(URI.create("https://sandbox.e2b.app"));
        assertThat(c.directUrl("abc", 49983, Optional.empty())).isEqualTo(URI.create("https://49983-abc.e2b.app"));
    }

    @Test
    void environmentVariablesNameKeyDomainAndUrls() {
        SandboxConfig c = SandboxConfig.builder(Map.of(
                        "E2B_API_KEY",
                        "k",
                        "E2B_DOMAIN",
                        "example.test",
                        "E2B_API_URL",
                        "http://localhost:3000",
                        "E2B_SANDBOX_URL",
                        "http://localhost:3000"))
                .build();
        assertThat(c.apiKey()).contains("k");
        assertThat(c.apiUrl()).isEqualTo(URI.create("http://localhost:3000"));
        assertThat(c.envdUrl("abc", Optional.of("other.test"))).isEqualTo(URI.create("http://localhost:3000"));
        assertThat(c.domain()).isEqualTo("example.test");
    }

    @Test
    void aCustomDomainGivesPortHostsAndTheApiHost() {
        SandboxConfig c =
                SandboxConfig.builder(Map.of("E2B_DOMAIN", "example.test")).build();
        assertThat(c.apiUrl()).isEqualTo(URI.create("https://api.example.test"));
        assertThat(c.envdUrl("abc", Optional.empty())).isEqualTo(URI.create("https://49983-abc.example.test"));
        assertThat(c.envdUrl("abc", Optional.of("sbx.test"))).isEqualTo(URI.create("https://49983-abc.sbx.test"));
        assertThat(c.host("abc", 8080, "sbx.test")).isEqualTo("8080-abc.sbx.test");
    }

    @Test
    void debugModeIsOnlyTheWordTrueAndPointsAtLocalhost() {
        assertThat(SandboxConfig.builder(Map.of("E2B_DEBUG", "TRUE")).build().debug())
                .isTrue();
        assertThat(SandboxConfig.builder(Map.of("E2B_DEBUG", "1")).build().debug())
                .isFalse();
        SandboxConfig c = SandboxConfig.builder(Map.of("E2B_DEBUG", "true")).build();
        assertThat(c.apiUrl()).isEqualTo(URI.create("http://localhost:3000"));
        assertThat(c.envdUrl("abc", Optional.empty())).isEqualTo(URI.create("http://localhost:49983"));
        assertThat(c.host("abc", 3000, "x")).isEqualTo("localhost:3000");
    }

    @Test
    void explicitValuesWinOverTheEnvironment() {
        SandboxConfig c = SandboxConfig.builder(Map.of("E2B_API_KEY", "env", "E2B_API_URL", "http://env:1"))
                .apiKey("secret-key")
                .apiUrl("http://mine:2")
                .debug(false)
                .build();
        assertThat(c.apiKey()).contains("secret-key");
        assertThat(c.apiUrl()).isEqualTo(URI.create("http://mine:2"));
        assertThat(c.toString()).doesNotContain("secret-key").contains("apiKey=<set>");
        assertThat(c.toBuilder().build().apiUrl()).isEqualTo(c.apiUrl());
    }

    @Test
    void aPlainHttpApiUrlAlsoServesTheSandboxesUnlessASandboxUrlIsGiven() {
        SandboxConfig local = SandboxConfig.builder(Map.of("E2B_API_URL", "http://localhost:3000"))
                .build();
        assertThat(local.sandboxUrl()).contains(URI.create("http://localhost:3000"));
        assertThat(local.envdUrl("abc", Optional.empty())).isEqualTo(URI.create("http://localhost:3000"));
        SandboxConfig split = SandboxConfig.builder(
                        Map.of("E2B_API_URL", "http://localhost:3000", "E2B_SANDBOX_URL", "http://localhost:3002"))
                .build();
        assertThat(split.envdUrl("abc", Optional.empty())).isEqualTo(URI.create("http://localhost:3002"));
        SandboxConfig tls = SandboxConfig.builder(Map.of("E2B_API_URL", "https://api.example.test"))
                .build();
        assertThat(tls.sandboxUrl()).isEmpty();
        assertThat(SandboxConfig.builder(Map.of()).debug(true).build().sandboxUrl())
                .isEmpty();
    }

    @Test
    void malformedUrlsAreRefused() {
        assertThatThrownBy(() ->
                        SandboxConfig.builder(Map.of()).apiUrl("localhost:3000").build())
                .isInstanceOf(InvalidArgumentException.class);
    }
}
