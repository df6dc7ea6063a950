package io.agentenv.backend.container.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.HostFixture.Sandbox;
import io.agentenv.backend.container.storage.LayerCapture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The host's channel to an in-sandbox agent (envd's place): a unix socket in the per-sandbox host dir bound into the
 * container, and TCP over the veth. Both listeners must survive a checkpoint to disk and come back in each fork's
 * own dir and netns.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class GuestChannelHostTest {

    private static final int PORT = 49983;
    /** A tiny agent: answers "pong <what was sent> <its pid>" on /run/envd/agent.sock and on TCP 0.0.0.0:49983. */
    private static final List<String> AGENT = List.of(
            "python3",
            "-c",
            String.join(
                    "\n",
                    "import os, socket, threading",
                    "def serve(server):",
                    "    while True:",
                    "        conn, _ = server.accept()",
                    "        data = conn.recv(64)",
                    "        conn.sendall(b'pong ' + data + b' ' + str(os.getpid()).encode())",
                    "        conn.close()",
                    "unix = socket.socket(socket.AF_UNIX)",
                    "unix.bind('/run/envd/agent.sock')",
                    "unix.listen()",
                    "tcp = socket.socket()",
                    "tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)",
                    "tcp.bind(('0.0.0.0', " + PORT + "))",
                    "tcp.listen()",
                    "threading.Thread(target=serve, args=(tcp,), daemon=True).start()",
                    "serve(unix)"));

    /** A JVM agent (envd runs on the bind-mounted JDK): answers "pong <pid>" on /run/envd/jvm.sock. */
    private static final String JVM_AGENT = String.join(
            "\n",
            "import java.net.*; import java.nio.*; import java.nio.channels.*; import java.nio.file.*;",
            "public class Agent {",
            "    public static void main(String[] args) throws Exception {",
            "        Path path = Path.of(\"/run/envd/jvm.sock\");",
            "        Files.deleteIfExists(path);",
            "        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {",
            "            server.bind(UnixDomainSocketAddress.of(path));",
            "            while (true) {",
            "                try (SocketChannel c = server.accept()) {",
            "                    c.write(ByteBuffer.wrap((\"pong \" + ProcessHandle.current().pid()).getBytes()));",
            "                }",
            "            }",
            "        }",
            "    }",
            "}",
            "");

    @FreshHostFixture
    private HostFixture host;

    private static String ask(SocketChannel channel, String message) throws IOException {
        try (channel) {
            channel.write(ByteBuffer.wrap(message.getBytes(StandardCharsets.UTF_8)));
            ByteBuffer reply = ByteBuffer.allocate(256);
            while (channel.read(reply) >= 0) {
                // read until the agent closes
            }
            return new String(reply.array(), 0, reply.position(), StandardCharsets.UTF_8);
        }
    }

    private static String overUnix(Sandbox sandbox, String message) throws IOException {
        return ask(connectUnix(sandbox.envd().resolve("agent.sock")), message);
    }

    /**
     * Connects to a unix socket, retrying briefly: the socket file appears at bind(), a moment before listen(), and a
     * restored listener may not be accepting yet when runc returns.
     */
    private static SocketChannel connectUnix(Path socket) throws IOException {
        java.time.Instant deadline = java.time.Instant.now().plusSeconds(10);
        while (true) {
            SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                channel.connect(UnixDomainSocketAddress.of(socket));
                return channel;
            } catch (IOException e) {
                channel.close();
                if (java.time.Instant.now().isAfter(deadline)) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(
                        Duration.ofMillis(5).toNanos());
            }
        }
    }

    private static String overTcp(Sandbox sandbox, String message) throws IOException {
        SocketChannel channel = SocketChannel.open();
        channel.socket().connect(new InetSocketAddress(sandbox.slot().sandboxAddress(), PORT), 2000);
        return ask(channel, message);
    }

    private static void awaitSocket(Sandbox sandbox) {
        HostFixture.await(
                "the agent's socket appears in the host dir",
                Duration.ofSeconds(10),
                () -> Files.exists(sandbox.envd().resolve("agent.sock")));
    }

    @Test
    void the_agent_answers_over_unix_socket_and_tcp_before_and_after_restore_and_in_forks() throws Exception {
        // given a running agent
        Path template = host.templateRootfs();
        Sandbox original = host.run("agent", AGENT, HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
        awaitSocket(original);
        String before = overUnix(original, "hello");
        assertThat(before).startsWith("pong hello ");
        assertThat(overTcp(original, "tcp")).isEqualTo("pong tcp " + before.substring("pong hello ".length()));

        // when it is checkpointed to disk, its upper captured, and restored in place
        Path images = host.sandboxesDir.resolve("ckpt/images");
        host.runc.checkpoint(
                original.id(), images, host.sandboxesDir.resolve("ckpt/work"), RuncRuntime.AfterCheckpoint.STOP);
        host.runc.delete(original.id());
        Path layer = host.sandboxesDir.resolve("layer");
        new LayerCapture(host.runner, Duration.ofSeconds(60)).capture(original.upper(), layer);
        host.runc.restore(original.id(), original.bundle(), images, original.restoreWork());

        // then the same agent process answers on both channels
        assertThat(overUnix(original, "again")).isEqualTo("pong again " + before.substring("pong hello ".length()));
        assertThat(overTcp(original, "tcp")).startsWith("pong tcp ");

        // when a fork is restored from the same images into its own overlay, envd dir and netns
        Sandbox fork = host.prepare("fork", List.of(layer, template), AGENT);
        host.runc.restore(fork.id(), fork.bundle(), images, fork.restoreWork());

        // then the fork's agent answers in the fork's own dir and address, and the original still answers in its own
        awaitSocket(fork);
        assertThat(overUnix(fork, "fork")).startsWith("pong fork ");
        assertThat(overTcp(fork, "fork-tcp")).startsWith("pong fork-tcp ");
        assertThat(overUnix(original, "still")).startsWith("pong still ");

        host.destroy(fork);
        host.destroy(original);
    }

    @Test
    void a_jvm_on_the_read_only_jdk_survives_a_checkpoint_to_disk_and_a_restore() throws Exception {
        // given a JVM serving on a unix socket in the envd dir
        List<String> jvm = List.of(
                HostFixture.JDK.resolve("bin/java").toString(),
                "-Xmx64m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-XX:-UsePerfData",
                "/run/envd/Agent.java");
        Sandbox sandbox = host.prepare("jvm", List.of(host.templateRootfs()), jvm);
        Files.writeString(sandbox.envd().resolve("Agent.java"), JVM_AGENT);
        host.runc.create(sandbox.id(), sandbox.bundle());
        host.runc.start(sandbox.id());
        HostFixture.await(
                "the JVM listens",
                Duration.ofSeconds(60),
                () -> Files.exists(sandbox.envd().resolve("jvm.sock")));
        String before = read(sandbox.envd().resolve("jvm.sock"));
        assertThat(before).startsWith("pong ");

        // when it is checkpointed to disk, stopped and restored
        Path images = host.sandboxesDir.resolve("jvm-ckpt/images");
        host.runc.checkpoint(
                sandbox.id(), images, host.sandboxesDir.resolve("jvm-ckpt/work"), RuncRuntime.AfterCheckpoint.STOP);
        host.runc.delete(sandbox.id());
        host.runc.restore(sandbox.id(), sandbox.bundle(), images, sandbox.restoreWork());

        // then the same JVM process answers
        assertThat(read(sandbox.envd().resolve("jvm.sock"))).isEqualTo(before);
        host.destroy(sandbox);
    }

    private static String read(Path socket) throws IOException {
        try (SocketChannel channel = connectUnix(socket)) {
            ByteBuffer reply = ByteBuffer.allocate(64);
            while (channel.read(reply) >= 0) {
                // until the agent closes
            }
            return new String(reply.array(), 0, reply.position(), StandardCharsets.UTF_8);
        }
    }
}
