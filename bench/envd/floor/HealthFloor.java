import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;

/**
 * The floor for envd's start-up and memory: the JDK's HTTP server (what envd serves with), one context answering
 * every request with 204, every exchange on a virtual thread (as envd). Nothing else. Run by floor.sh with envd's own
 * jvm.options and an AOT cache recorded for it the same way as envd's (see floor.sh).
 *
 *   java @jvm.options -XX:AOTCache=floor.aot -cp floor.jar HealthFloor PORT [--train]
 *
 * --train: answer three requests to itself, then exit (the AOT cache's training run).
 */
public final class HealthFloor {
    public static void main(String[] args) throws Exception {
        System.setProperty("com.sun.net.httpserver.HttpServerProvider", "sun.net.httpserver.DefaultHttpServerProvider");
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress(Integer.parseInt(args[0])), 128);
        server.setExecutor(Executors.newThreadPerTaskExecutor(Thread.ofVirtual().factory()));
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.start();
        if (args.length > 1 && args[1].equals("--train")) {
            int port = server.getAddress().getPort();
            for (int i = 0; i < 3; i++) {
                try (var socket = new java.net.Socket("127.0.0.1", port)) {
                    socket.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes());
                    socket.getInputStream().readAllBytes();
                }
            }
            System.exit(0);
        }
    }
}
