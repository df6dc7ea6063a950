package io.agentenv.server.console;

import static java.util.Objects.requireNonNull;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.zip.GZIPOutputStream;

/**
 * The console's built files, read once from the class path: {@value #ROOT}{@code /} in the {@code agentenv-console}
 * jar, listed by its {@value #LISTING} (one path a line, written by the console's build). Text files are also kept
 * gzip-compressed. Immutable once loaded.
 */
final class ConsoleAssets {
    static final String ROOT = "agentenv-console";
    static final String LISTING = "assets.txt";

    /** One file: its bytes, its gzip form when that is smaller, its content type, and whether its name is hashed. */
    record Asset(byte[] body, Optional<byte[]> gzip, String contentType, boolean immutable) {
        Asset {
            requireNonNull(body, "body is null");
            requireNonNull(gzip, "gzip is null");
            requireNonNull(contentType, "contentType is null");
        }
    }

    private final Map<String, Asset> assets;

    private ConsoleAssets(Map<String, Asset> assets) {
        this.assets = Map.copyOf(assets);
    }

    /** The files listed under {@code root} on {@code loader}'s class path; empty when the console was not built. */
    static ConsoleAssets load(ClassLoader loader, String root) {
        byte[] listing = read(loader, root + "/" + LISTING);
        if (listing == null) {
            return new ConsoleAssets(Map.of());
        }
        Map<String, Asset> assets = new HashMap<>();
        for (String line : new String(listing, StandardCharsets.UTF_8).split("\n")) {
            String path = line.strip();
            if (path.isEmpty() || path.startsWith("/") || path.contains("..") || path.contains("\\")) {
                continue;
            }
            byte[] body = read(loader, root + "/" + path);
            if (body == null) {
                throw new IllegalStateException("console asset listed but missing: " + path);
            }
            String type = contentType(path);
            Optional<byte[]> gzip = compressible(type) ? gzip(body) : Optional.empty();
            assets.put(path, new Asset(body, gzip, type, path.startsWith("assets/")));
        }
        return new ConsoleAssets(assets);
    }

    /** The asset at {@code path} (relative to {@code /console/}, no leading slash). */
    Optional<Asset> find(String path) {
        return Optional.ofNullable(assets.get(path));
    }

    boolean isEmpty() {
        return assets.isEmpty();
    }

    private static byte[] read(ClassLoader loader, String name) {
        try (InputStream in = loader.getResourceAsStream(name)) {
            return in == null ? null : in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read console asset " + name, e);
        }
    }

    private static Optional<byte[]> gzip(byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length / 3 + 64);
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] compressed = out.toByteArray();
        return compressed.length < body.length ? Optional.of(compressed) : Optional.empty();
    }

    private static boolean compressible(String type) {
        return type.startsWith("text/")
                || type.startsWith("application/javascript")
                || type.contains("json")
                || type.startsWith("image/svg");
    }

    static String contentType(String path) {
        String name = path.toLowerCase(Locale.ROOT);
        int dot = name.lastIndexOf('.');
        String ext = dot < 0 ? "" : name.substring(dot + 1);
        return switch (ext) {
            case "html" -> "text/html; charset=utf-8";
            case "js", "mjs" -> "application/javascript; charset=utf-8";
            case "css" -> "text/css; charset=utf-8";
            case "json", "map" -> "application/json; charset=utf-8";
            case "svg" -> "image/svg+xml";
            case "png" -> "image/png";
            case "ico" -> "image/x-icon";
            case "woff2" -> "font/woff2";
            case "txt" -> "text/plain; charset=utf-8";
            default -> "application/octet-stream";
        };
    }
}
