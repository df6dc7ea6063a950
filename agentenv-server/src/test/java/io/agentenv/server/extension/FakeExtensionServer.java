package io.agentenv.server.extension;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.agentenv.orchestrator.Hook;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A real custom extension for tests: a JDK HTTP server on 127.0.0.1 that records every hook call and answers each
 * hook from a script (2xx, 4xx, 5xx, never in time, connection closed, held at a latch). Unscripted calls get the
 * default answer: start-fresh, start-resume and stop {@code 200 {}}, patch-params echoes the patch as the new params.
 * {@link #close()} releases every held or hanging call and stops the server.
 */
public final class FakeExtensionServer implements AutoCloseable {
    /** One recorded call: the hook and the JSON body it was sent. */
    public record Call(Hook hook, JsonNode body) {
        public String text(String field) {
            JsonNode value = body.get(field);
            return value == null || value.isNull() ? null : value.asText();
        }
    }

    /** What to do with one call. */
    public sealed interface Answer {}

    /** Answer with this status and body. */
    public record Reply(int status, String body) implements Answer {}

    /** Never answer (until the server closes): beyond any client timeout. */
    public record Hang() implements Answer {}

    /** Send 200 and the start of a body, then stall (until the server closes): a body slower than any timeout. */
    public record StallBody() implements Answer {}

    /** Close the connection without an answer. */
    public record Drop() implements Answer {}

    /** Wait until {@link Hold#release()}, then answer {@code then}. */
    public static final class Hold implements Answer {
        private final CountDownLatch entered = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private final Answer then;

        public Hold(Answer then) {
            this.then = requireNonNull(then, "then is null");
        }

        public void awaitEntered(Duration timeout) throws InterruptedException {
            if (!entered.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError("no hook call reached the hold within " + timeout);
            }
        }

        public void release() {
            released.countDown();
        }
    }

    public static Reply reply(int status, String body) {
        return new Reply(status, body);
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final Map<Hook, Deque<Answer>> scripts = new EnumMap<>(Hook.class);
    private final List<Call> calls = new ArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition recorded = lock.newCondition();
    private final CountDownLatch closing = new CountDownLatch(1);
    private final List<Hold> holds = new ArrayList<>();

    private FakeExtensionServer(HttpServer server) {
        this.server = server;
        for (Hook hook : Hook.values()) {
            scripts.put(hook, new ConcurrentLinkedDeque<>());
        }
    }

    public static FakeExtensionServer start() throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        FakeExtensionServer fake = new FakeExtensionServer(http);
        http.createContext("/base/sandbox-hook/", fake::handle);
        http.setExecutor(fake.threads);
        http.start();
        return fake;
    }

    /** The base URL to configure (hooks are below {@code /sandbox-hook/}). */
    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/base");
    }

    /** Real hooks against this server with the given per-call timeout. */
    public HttpLifecycleHooks hooks(HttpClient http, Duration timeout) {
        return new HttpLifecycleHooks(http, url(), timeout);
    }

    /** Queues answers for the next calls of {@code hook}, in order. */
    public void script(Hook hook, Answer... answers) {
        scripts.get(hook).addAll(Arrays.asList(answers));
    }

    /** The next call of {@code hook} waits at the returned hold, then gets {@code then}. */
    public Hold holdNext(Hook hook, Answer then) {
        Hold hold = new Hold(then);
        lock.lock();
        try {
            holds.add(hold);
        } finally {
            lock.unlock();
        }
        script(hook, hold);
        return hold;
    }

    public List<Call> calls() {
        lock.lock();
        try {
            return List.copyOf(calls);
        } finally {
            lock.unlock();
        }
    }

    public List<Call> calls(Hook hook) {
        return calls().stream().filter(c -> c.hook() == hook).toList();
    }

    /** Waits (bounded, no polling) until at least {@code count} calls of {@code hook} were received; returns them. */
    public List<Call> awaitCalls(Hook hook, int count, Duration timeout) throws InterruptedException {
        return awaitCalls(c -> c.hook() == hook, count, timeout);
    }

    public List<Call> awaitCalls(Predicate<Call> which, int count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (true) {
                List<Call> matching = calls.stream().filter(which).toList();
                if (matching.size() >= count) {
                    return matching;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("expected " + count + " matching hook calls within " + timeout + ", got "
                            + matching.size() + ": " + calls);
                }
                recorded.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String name = exchange.getRequestURI()
                    .getPath()
                    .substring(exchange.getRequestURI().getPath().lastIndexOf('/') + 1);
            Hook hook = Arrays.stream(Hook.values())
                    .filter(h -> h.wireName().equals(name))
                    .findFirst()
                    .orElse(null);
            JsonNode body;
            try (InputStream in = exchange.getRequestBody()) {
                body = JSON.readTree(in.readAllBytes());
            }
            if (hook == null
                    || !"POST".equals(exchange.getRequestMethod())
                    || !exchange.getRequestURI().getPath().startsWith("/base/sandbox-hook/")) {
                send(exchange, new Reply(404, "{\"error\":\"no such hook\"}"));
                return;
            }
            Answer answer;
            lock.lock();
            try { // the n-th recorded call of a hook gets the n-th scripted answer
                calls.add(new Call(hook, body));
                answer = scripts.get(hook).pollFirst();
                recorded.signalAll();
            } finally {
                lock.unlock();
            }
            answer(exchange, answer == null ? defaultAnswer(hook, body) : answer);
        }
    }

    private void answer(HttpExchange exchange, Answer answer) throws IOException {
        switch (answer) {
            case Reply reply -> send(exchange, reply);
            case Hang hang -> awaitQuietly(closing);
            case StallBody stall -> {
                exchange.sendResponseHeaders(200, 0); // chunked
                OutputStream out = exchange.getResponseBody();
                out.write("{\"extraBootArgs\":".getBytes(StandardCharsets.UTF_8));
                out.flush();
                awaitQuietly(closing);
            }
            case Drop drop -> {
                // closing the exchange without response headers makes the server drop the connection
            }
            case Hold hold -> {
                hold.entered.countDown();
                awaitQuietly(hold.released);
                answer(exchange, hold.then);
            }
        }
    }

    private static Answer defaultAnswer(Hook hook, JsonNode body) {
        if (hook == Hook.PATCH_PARAMS) {
            ObjectNode answer = JSON.createObjectNode();
            answer.set("customExtensionParams", body.get("patch"));
            return new Reply(200, answer.toString());
        }
        return new Reply(200, "{}");
    }

    private static void send(HttpExchange exchange, Reply reply) throws IOException {
        byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(reply.status(), bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(2, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        closing.countDown();
        lock.lock();
        try {
            holds.forEach(Hold::release);
        } finally {
            lock.unlock();
        }
        server.stop(0);
        threads.shutdownNow();
    }
}
