package io.agentenv.envd.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EnvdServerTest {
    private final EnvdServer server =
            new EnvdServer(new InetSocketAddress("127.0.0.1", 0), Optional.empty(), Duration.ofMillis(200));

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void a_request_arriving_before_the_handler_is_named_waits_for_it_and_is_then_served() throws Exception {
        server.start();
        CountDownLatch received = new CountDownLatch(1);
        CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> get(server.tcpPort(), received));
        assertThat(received.await(10, TimeUnit.SECONDS)).as("request sent").isTrue();
        assertThat(answer).as("no handler yet").isNotDone();

        server.serve(exchange -> {
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });

        assertThat(answer.get(10, TimeUnit.SECONDS)).startsWith("HTTP/1.1 204");
    }

    @Test
    void a_server_stopped_before_it_had_a_handler_closes_the_waiting_connections() throws Exception {
        server.start();
        CountDownLatch received = new CountDownLatch(1);
        CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> get(server.tcpPort(), received));
        assertThat(received.await(10, TimeUnit.SECONDS)).isTrue();
        awaitUntil(
                () -> server.exchangesInFlight() == 1); // sent is not yet dispatched: wait until it waits for a handler

        server.close();

        assertThat(answer.get(10, TimeUnit.SECONDS))
                .as("no response, just the end of the connection")
                .isEmpty();
    }

    @Test
    void only_the_first_handler_counts() throws Exception {
        server.start();
        server.serve(exchange -> {
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.serve(exchange -> {
            exchange.sendResponseHeaders(500, -1);
            exchange.close();
        });

        assertThat(get(server.tcpPort(), new CountDownLatch(1))).startsWith("HTTP/1.1 204");
    }

    private static void awaitUntil(java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition not met within 10 s").isLessThan(deadline);
            Thread.onSpinWait();
        }
    }

    /** GET /health over a plain socket: the whole answer as text ("" if the server closed without one). */
    private static String get(int port, CountDownLatch sent) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            OutputStream out = socket.getOutputStream();
            out.write("GET /health HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n\r\n".getBytes(UTF_8));
            out.flush();
            sent.countDown();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
