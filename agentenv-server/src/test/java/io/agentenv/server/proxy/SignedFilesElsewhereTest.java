package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.orchestrator.GuestRoute;
import java.net.URLEncoder;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A signed {@code /files} URL reaches a node of a cluster that does not run its sandbox (a gateway sends such URLs to
 * any node): the node finds the sandbox among the cluster's records and sends the client to the owner's proxy path on
 * the same host; a sandbox it runs itself is served as before.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SignedFilesElsewhereTest {
    @TempDir
    Path dir;

    /** Sandboxes whose instance is "on another node": a RUNNING record this node has no endpoint for. */
    private final Set<String> elsewhere = ConcurrentHashMap.newKeySet();

    private ProxyHarness h;

    @BeforeEach
    void start() throws Exception {
        h = new ProxyHarness(dir, ProxySettings.defaults(List.of(ProxyHarness.DOMAIN)), orchestrator -> id -> {
            GuestRoute route = orchestrator.route(id);
            return elsewhere.contains(id.value())
                    ? new GuestRoute(
                            route.id(),
                            route.state(),
                            Optional.empty(),
                            route.secure(),
                            route.publicTraffic(),
                            route.autoResume(),
                            route.maskRequestHost())
                    : route;
        });
    }

    @AfterEach
    void stop() throws Exception {
        h.close();
    }

    @Test
    void a_signed_url_of_a_sandbox_running_elsewhere_is_redirected_to_its_proxy_path() throws Exception {
        JsonNode created = h.create("\"secure\":true");
        String id = created.get("sandboxID").asText();
        elsewhere.add(id);
        String query = signedQuery(created.get("envdAccessToken").asText());

        ContentResponse response =
                h.request("/files?" + query).followRedirects(false).send();

        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(307);
        assertThat(response.getHeaders().get("Location")).isEqualTo("/proxy/" + id + "/49983/files?" + query);
    }

    @Test
    void a_signed_url_of_a_sandbox_running_here_is_served_here() throws Exception {
        JsonNode created = h.create("\"secure\":true");
        String query = signedQuery(created.get("envdAccessToken").asText());

        ContentResponse response = h.request("/files?" + query)
                .method(HttpMethod.GET)
                .followRedirects(false)
                .send();

        assertThat(response.getContentAsString()).isEqualTo("no such path /files"); // the upstream's own answer
        assertThat(h.upstream.paths).containsExactly("/files?" + query);
    }

    /** The query of a signed read of /tmp/x as user, with the sandbox's envd token. */
    private static String signedQuery(String envdToken) throws Exception {
        String signature = "v1_"
                + Base64.getEncoder()
                        .withoutPadding()
                        .encodeToString(MessageDigest.getInstance("SHA-256")
                                .digest(("/tmp/x:read:user:" + envdToken).getBytes(UTF_8)));
        return "path=%2Ftmp%2Fx&username=user&signature=" + URLEncoder.encode(signature, UTF_8);
    }
}
