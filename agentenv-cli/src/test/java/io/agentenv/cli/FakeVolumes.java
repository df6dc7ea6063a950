package io.agentenv.cli;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Collectors;

/**
 * The Volume API on a {@link FakeSandboxServer}: the management routes ({@code /volumes}, API key) answer one volume,
 * {@link #ID} named {@link #NAME}, and a second one; the content routes of {@link #ID} ({@code /volumecontent/ID/...})
 * keep files in memory and take only {@code Authorization: Bearer} {@link #TOKEN}, as the server does.
 */
final class FakeVolumes {
    static final String ID = "vol0123456789abcdefg";
    static final String NAME = "data";
    static final String TOKEN = "volume-token-secret-5678";
    static final String OTHER_ID = "zzzzzzzzzzzzzzzzzzzz";
    static final String OTHER_NAME = "scratch";

    /** The volume's files: path (from its root, starting with /) to content; directories are paths ending with /. */
    final Map<String, byte[]> files = new ConcurrentSkipListMap<>();

    FakeVolumes(FakeSandboxServer server) {
        server.api("POST /volumes", 201, andToken(ID, NAME, TOKEN));
        server.api("GET /volumes", 200, """
                [{"volumeID":"%s","name":"%s"},{"volumeID":"%s","name":"%s"}]""".formatted(ID, NAME, OTHER_ID, OTHER_NAME));
        server.api("GET /volumes/" + ID, 200, andToken(ID, NAME, TOKEN));
        server.api("GET /volumes/" + OTHER_ID, 200, andToken(OTHER_ID, OTHER_NAME, "other-token"));
        server.api("DELETE /volumes/" + ID, 204, "");
        server.api("DELETE /volumes/" + OTHER_ID, 409, """
                {"code":409,"message":"volume %s is mounted by sandbox %s"}""".formatted(OTHER_ID, FakeSandboxServer.ID));
        String prefix = "/volumecontent/" + ID;
        server.api("GET " + prefix + "/dir", (request, ex) -> authorised(request, ex, this::list));
        server.api("POST " + prefix + "/dir", (request, ex) -> authorised(request, ex, this::makeDir));
        server.api("DELETE " + prefix + "/path", (request, ex) -> authorised(request, ex, this::remove));
        server.api("PUT " + prefix + "/file", (request, ex) -> authorised(request, ex, this::write));
        server.api("GET " + prefix + "/file", (request, ex) -> authorised(request, ex, this::read));
    }

    static String andToken(String id, String name, String token) {
        return """
                {"volumeID":"%s","name":"%s","token":"%s","sizeMiB":1024}""".formatted(id, name, token);
    }

    private interface Route {
        void answer(FakeSandboxServer.Request request, HttpExchange ex, String path) throws IOException;
    }

    private static void authorised(FakeSandboxServer.Request request, HttpExchange ex, Route route) throws IOException {
        if (!("Bearer " + TOKEN).equals(request.header("Authorization"))) {
            FakeSandboxServer.json(ex, 401, "{\"code\":401,\"message\":\"invalid volume token\"}");
            return;
        }
        String path = query(request).get("path");
        if (path == null) {
            FakeSandboxServer.json(ex, 400, "{\"code\":400,\"message\":\"query parameter 'path' is required\"}");
            return;
        }
        route.answer(request, ex, path.startsWith("/") ? path : "/" + path);
    }

    static Map<String, String> query(FakeSandboxServer.Request request) {
        String uri = request.uri();
        int q = uri.indexOf('?');
        Map<String, String> query = new TreeMap<>();
        if (q >= 0) {
            for (String pair : uri.substring(q + 1).split("&")) {
                int eq = pair.indexOf('=');
                query.put(
                        URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8),
                        eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return query;
    }

    private void list(FakeSandboxServer.Request request, HttpExchange ex, String path) throws IOException {
        String dir = path.endsWith("/") ? path : path + "/";
        String entries = files.entrySet().stream()
                .filter(e -> e.getKey().startsWith(dir) && !e.getKey().equals(dir))
                .map(e -> stat(e.getKey(), e.getValue()))
                .collect(Collectors.joining(","));
        FakeSandboxServer.json(ex, 200, "[" + entries + "]");
    }

    private void makeDir(FakeSandboxServer.Request request, HttpExchange ex, String path) throws IOException {
        String dir = path.endsWith("/") ? path : path + "/";
        files.put(dir, new byte[0]);
        FakeSandboxServer.json(ex, 201, stat(dir, new byte[0]));
    }

    private void remove(FakeSandboxServer.Request request, HttpExchange ex, String path) throws IOException {
        boolean removed = files.keySet().removeIf(p -> p.equals(path) || p.startsWith(path + "/"));
        if (removed) {
            FakeSandboxServer.json(ex, 204, "");
        } else {
            FakeSandboxServer.json(ex, 404, "{\"code\":404,\"message\":\"path " + path + " not found\"}");
        }
    }

    private void write(FakeSandboxServer.Request request, HttpExchange ex, String path) throws IOException {
        files.put(path, request.body());
        FakeSandboxServer.json(ex, 200, stat(path, request.body()));
    }

    private void read(FakeSandboxServer.Request request, HttpExchange ex, String path) throws IOException {
        byte[] content = files.get(path);
        if (content == null || path.endsWith("/")) {
            FakeSandboxServer.json(ex, 404, "{\"code\":404,\"message\":\"path " + path + " not found\"}");
            return;
        }
        ex.getResponseHeaders().add("Content-Type", "application/octet-stream");
        ex.sendResponseHeaders(200, content.length == 0 ? -1 : content.length);
        ex.getResponseBody().write(content);
    }

    /** A {@code VolumeEntryStat} of a file, or of a directory when the path ends with /. */
    private static String stat(String path, byte[] content) {
        boolean dir = path.endsWith("/");
        String clean = dir ? path.substring(0, path.length() - 1) : path;
        String name = clean.substring(clean.lastIndexOf('/') + 1);
        return """
                {"name":"%s","path":"%s","type":"%s","size":%d,"mode":%d,"uid":1000,"gid":1000,
                 "atime":"2026-01-02T03:04:05.678Z","mtime":"2026-01-02T03:04:05.678Z","ctime":"2026-01-02T03:04:05Z"}""".formatted(name, clean, dir ? "directory" : "file", dir ? 4096 : content.length, dir ? 0755 : 0644);
    }
}
