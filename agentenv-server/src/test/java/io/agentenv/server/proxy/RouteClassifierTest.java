package io.agentenv.server.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Locale;
import org.eclipse.jetty.http.HttpFields;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RouteClassifierTest {
    private static final String ID = "abcdefghij0123456789";
    private final RouteClassifier classifier = new RouteClassifier(List.of("sbx.test", "local.dev:8080"));

    private ProxyRoute classify(String method, String host, String path, String query, HttpFields headers) {
        return classifier.classify(method, host, path, query, headers);
    }

    @Test
    void routing_headers_win_over_control_plane_paths_and_keep_the_path() {
        HttpFields headers = HttpFields.build().put("E2b-Sandbox-Id", ID).put("E2b-Sandbox-Port", "49983");
        assertThat(classify("GET", "127.0.0.1:3000", "/health", null, headers))
                .isEqualTo(new ProxyRoute.Targeted(ID, 49983, "/health"));
        assertThat(classify("POST", "127.0.0.1:3000", "/sandboxes", "a=1", headers))
                .isEqualTo(new ProxyRoute.Targeted(ID, 49983, "/sandboxes?a=1"));
    }

    @Test
    void agentenv_routing_headers_work_too() {
        HttpFields headers = HttpFields.build().put("x-agentenv-sandbox-id", ID).put("x-agentenv-target-port", "8080");
        assertThat(classify("GET", null, "/x", null, headers)).isEqualTo(new ProxyRoute.Targeted(ID, 8080, "/x"));
    }

    @Test
    void a_routing_header_alone_or_a_bad_port_or_id_is_malformed() {
        assertThat(classify("GET", null, "/", null, HttpFields.build().put("E2b-Sandbox-Id", ID)))
                .isInstanceOf(ProxyRoute.Malformed.class);
        assertThat(classify("GET", null, "/", null, HttpFields.build().put("E2b-Sandbox-Port", "1")))
                .isInstanceOf(ProxyRoute.Malformed.class);
        for (String port : List.of("0", "65536", "-1", "80a", "", "123456")) {
            assertThat(classify(
                            "GET",
                            null,
                            "/",
                            null,
                            HttpFields.build().put("E2b-Sandbox-Id", ID).put("E2b-Sandbox-Port", port)))
                    .as(port)
                    .isInstanceOf(ProxyRoute.Malformed.class);
        }
        assertThat(classify(
                        "GET",
                        null,
                        "/",
                        null,
                        HttpFields.build().put("E2b-Sandbox-Id", "../etc").put("E2b-Sandbox-Port", "80")))
                .isInstanceOf(ProxyRoute.Malformed.class);
    }

    @Test
    void a_host_under_a_configured_domain_is_always_the_proxy() {
        assertThat(classify("GET", "3000-" + ID + ".sbx.test", "/sandboxes", null, HttpFields.EMPTY))
                .isEqualTo(new ProxyRoute.Targeted(ID, 3000, "/sandboxes"));
        assertThat(classify("GET", "3000-" + ID.toUpperCase(Locale.ROOT) + ".SBX.TEST.:80", "/", "q", HttpFields.EMPTY))
                .isEqualTo(new ProxyRoute.Targeted(ID, 3000, "/?q"));
        assertThat(classify("GET", "49983-" + ID + ".local.dev:8080", "/health", null, HttpFields.EMPTY))
                .isEqualTo(new ProxyRoute.Targeted(ID, 49983, "/health"));
    }

    @Test
    void hosts_outside_the_domains_or_on_another_port_of_one_are_the_control_plane() {
        assertThat(classify("GET", "3000-" + ID + ".other.test", "/health", null, HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.ControlPlane.class);
        assertThat(classify("GET", "3000-" + ID + ".local.dev:9090", "/health", null, HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.ControlPlane.class);
        assertThat(classify("GET", "sbx.test", "/health", null, HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.ControlPlane.class);
    }

    @Test
    void without_a_configured_domain_a_port_sandbox_label_under_any_domain_is_the_proxy() {
        RouteClassifier anyDomain = new RouteClassifier(List.of());
        assertThat(anyDomain.classify("GET", "8000-" + ID + ".localhost:3000", "/index.html", null, HttpFields.EMPTY))
                .isEqualTo(new ProxyRoute.Targeted(ID, 8000, "/index.html"));
        assertThat(anyDomain.classify(
                        "GET",
                        "49983-" + ID.toUpperCase(Locale.ROOT) + ".E2B.app.",
                        "/health",
                        "a=1",
                        HttpFields.EMPTY))
                .isEqualTo(new ProxyRoute.Targeted(ID, 49983, "/health?a=1"));
        assertThat(anyDomain.classify("GET", "8000-" + ID + ".sandbox.example.com", "/", null, HttpFields.EMPTY))
                .isEqualTo(new ProxyRoute.Targeted(ID, 8000, "/"));
        for (String host : List.of(
                "localhost:3000",
                "127.0.0.1:3000",
                "[::1]:3000",
                "api.example.com",
                "8000-notanid.localhost",
                ID + ".localhost",
                "8000-" + ID,
                "8000-" + ID + ".",
                "x8000-" + ID + ".localhost",
                "a.8000-" + ID + ".localhost")) {
            assertThat(anyDomain.classify("GET", host, "/health", null, HttpFields.EMPTY))
                    .as(host)
                    .isInstanceOf(ProxyRoute.ControlPlane.class);
        }
        assertThat(anyDomain.classify("GET", "99999-" + ID + ".localhost", "/", null, HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.Malformed.class);
    }

    @Test
    void a_configured_domain_stays_strict() {
        assertThat(classify("GET", "8000-" + ID + ".localhost:3000", "/health", null, HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.ControlPlane.class);
    }

    @Test
    void a_malformed_label_under_a_domain_is_malformed() {
        assertThat(classify("GET", "nodash.sbx.test", "/", null, HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.Malformed.class);
        assertThat(classify("GET", "a.b-" + ID + ".sbx.test", "/", null, HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.Malformed.class);
    }

    @Test
    void proxy_paths_strip_their_prefix() {
        assertThat(classify("GET", null, "/proxy/" + ID + "/8080/a/b%2Fc", "x=1", HttpFields.EMPTY))
                .isEqualTo(new ProxyRoute.Targeted(ID, 8080, "/a/b%2Fc?x=1"));
        assertThat(classify("GET", null, "/proxy/" + ID + "/8080", null, HttpFields.EMPTY))
                .isEqualTo(new ProxyRoute.Targeted(ID, 8080, "/"));
        assertThat(classify("GET", null, "/proxy/" + ID, null, HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.Malformed.class);
    }

    @Test
    void signed_files_urls_are_routed_by_signature_unsigned_ones_go_to_the_control_plane() {
        assertThat(classify("GET", null, "/files", "path=a&signature=v1_x", HttpFields.EMPTY))
                .isEqualTo(new ProxyRoute.SignedFiles("/files?path=a&signature=v1_x"));
        assertThat(classify("POST", null, "/files", "signature=v1_x", HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.SignedFiles.class);
        assertThat(classify("GET", null, "/files", "path=a", HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.ControlPlane.class);
        assertThat(classify("DELETE", null, "/files", "signature=v1_x", HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.ControlPlane.class);
        assertThat(classify("GET", null, "/v2/sandboxes", null, HttpFields.EMPTY))
                .isInstanceOf(ProxyRoute.ControlPlane.class);
    }
}
