package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.orchestrator.GuestRoute;
import io.agentenv.spi.GuestEndpoint;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request whose looked-up endpoint refuses the connection (the sandbox moved between the lookup and the connect) is
 * resolved once more. The proxy's lookup is faked to hand out a dead endpoint while {@link #staleLookups} says so.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ProxyRerouteTest {
    private static final int ENVD = ProxySettings.ENVD_PORT;

    @TempDir
    Path dir;

    private ProxyHarness h;
    private GuestEndpoint dead;
    /** How many more lookups answer the dead endpoint (-1: all of them). */
    private final AtomicInteger staleLookups = new AtomicInteger();

    private final AtomicInteger lookups = new AtomicInteger();
    private final AtomicBoolean counting = new AtomicBoolean();
    /** While set, a lookup of this sandbox after its first waits for {@link #lookupGate} (a slow second lookup). */
    private volatile String heldSandbox;

    private final CountDownLatch lookupGate = new CountDownLatch(1);
    private final CountDownLatch lookupHeld = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception {
        try (ServerSocket probe = new ServerSocket(0)) {
            dead = new GuestEndpoint("127.0.0.1", probe.getLocalPort(), Optional.empty()); // closed: refuses
        }
        h = new ProxyHarness(dir, ProxySettings.defaults(List.of(ProxyHarness.DOMAIN)), orchestrator -> id -> {
            GuestRoute route = orchestrator.route(id);
            if (heldSandbox != null && !id.value().equals(heldSandbox)) {
                return route; // another sandbox: never stale
            }
            if (id.value().equals(heldSandbox) && staleLookups.get() == 0) {
                lookupHeld.countDown();
                try {
                    lookupGate.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (counting.get()) {
                lookups.incrementAndGet();
            }
            if (route.endpoint().isPresent() && (staleLookups.get() < 0 || staleLookups.getAndDecrement() > 0)) {
                return new GuestRoute(
                        route.id(),
                        route.state(),
                        Optional.of(dead),
                        route.secure(),
                        route.publicTraffic(),
                        route.autoResume());
            }
            return route;
        });
    }

    @AfterEach
    void stop() throws Exception {
        h.close();
    }

    private ContentResponse envd(String id, String path) throws Exception {
        return h.routed(id, ENVD, path)
                .headers(x -> x.put("X-Access-Token", h.tokens.envdAccessToken(id)))
                .send();
    }

    @Test
    void a_stale_endpoint_refusing_connections_is_looked_up_again_and_the_request_passes() throws Exception {
        String id = h.createId();
        staleLookups.set(1);
        counting.set(true);

        ContentResponse response = envd(id, "/health");

        assertThat(response.getStatus()).isEqualTo(200);
        assertThat(response.getContentAsString()).isEqualTo("upstream");
        assertThat(lookups.get()).isEqualTo(2);
    }

    @Test
    void a_request_body_is_sent_intact_to_the_endpoint_found_by_the_second_lookup() throws Exception {
        String id = h.createId();
        String body = "x".repeat(200_000);
        staleLookups.set(1);

        ContentResponse response = h.routed(id, ENVD, "/upload")
                .method(HttpMethod.POST)
                .headers(x -> x.put("X-Access-Token", h.tokens.envdAccessToken(id)))
                .body(new StringRequestContent("application/octet-stream", body))
                .send();

        assertThat(response.getStatus()).isEqualTo(200);
        String sha =
                HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body.getBytes(UTF_8)));
        assertThat(response.getContentAsString()).isEqualTo(body.length() + " " + sha);
    }

    @Test
    void an_endpoint_that_still_refuses_after_the_second_lookup_is_502_without_a_third() throws Exception {
        String id = h.createId();
        staleLookups.set(-1);
        counting.set(true);

        ContentResponse response = envd(id, "/health");

        assertThat(response.getStatus()).isEqualTo(502);
        assertThat(response.getContentAsString()).contains("is not reachable");
        assertThat(lookups.get()).isEqualTo(2);
        assertThat(h.upstream.paths).isEmpty();
    }

    @Test
    void a_second_lookup_that_waits_for_its_sandbox_holds_up_no_other_sandboxs_traffic() throws Exception {
        String slow = h.createId();
        String other = h.createId();
        heldSandbox = slow;
        staleLookups.set(1);
        CompletableFuture<ContentResponse> held;
        try {
            held = new CompletableResponseListener(h.routed(slow, ENVD, "/health")
                            .headers(x -> x.put("X-Access-Token", h.tokens.envdAccessToken(slow))))
                    .send();
            assertThat(lookupHeld.await(30, TimeUnit.SECONDS))
                    .as("the second lookup started")
                    .isTrue();

            CompletableFuture<ContentResponse> meanwhile = new CompletableResponseListener(
                            h.routed(other, ENVD, "/health")
                                    .headers(x -> x.put("X-Access-Token", h.tokens.envdAccessToken(other))))
                    .send();

            assertThat(meanwhile.get(30, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
            assertThat(held).isNotDone();
        } finally {
            lookupGate.countDown();
        }
        assertThat(held.get(30, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
    }
}
