package io.agentenv.server.console;

import static java.util.Objects.requireNonNull;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Serves the web console's static files under {@value #PREFIX} and hands every other request to the REST API. Every
 * console answer carries a strict Content-Security-Policy (scripts, styles, images, fonts and connections from this
 * origin only; no inline scripts or styles, no framing, no plugins), {@code nosniff} and no referrer. Hashed files
 * under {@code assets/} are cached for a year, {@code index.html} is revalidated every time; text is sent gzipped to
 * clients that accept it. Only GET and HEAD; the console's files need no key (the key is typed into the page and
 * sent by it as {@code X-API-Key} to the API, never to these routes).
 */
public final class ConsoleHandler extends Handler.Wrapper {
    public static final String PREFIX = "/console";

    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self';"
            + " img-src 'self'; font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none';"
            + " form-action 'none'; frame-ancestors 'none'";

    private static final HttpField CSP = new PreEncodedHttpField("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    private static final HttpField NOSNIFF = new PreEncodedHttpField("X-Content-Type-Options", "nosniff");
    private static final HttpField NO_REFERRER = new PreEncodedHttpField("Referrer-Policy", "no-referrer");
    private static final HttpField NO_FRAMES = new PreEncodedHttpField("X-Frame-Options", "DENY");
    private static final HttpField OPENER = new PreEncodedHttpField("Cross-Origin-Opener-Policy", "same-origin");
    private static final HttpField IMMUTABLE =
            new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "public, max-age=31536000, immutable");
    private static final HttpField NO_CACHE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-cache");
    private static final HttpField VARY = new PreEncodedHttpField(HttpHeader.VARY, "Accept-Encoding");
    private static final HttpField GZIP = new PreEncodedHttpField(HttpHeader.CONTENT_ENCODING, "gzip");

    private final Supplier<ConsoleAssets> assets;

    private ConsoleHandler(Supplier<ConsoleAssets> assets) {
        this.assets = requireNonNull(assets, "assets is null");
    }

    /** The console over the files on the server's class path (read at the first console request), then {@code api}. */
    public static ConsoleHandler inFrontOf(Handler api) {
        return inFrontOf(api, ConsoleHandler.class.getClassLoader(), ConsoleAssets.ROOT);
    }

    static ConsoleHandler inFrontOf(Handler api, ClassLoader loader, String root) {
        ConsoleHandler handler = new ConsoleHandler(new Supplier<>() {
            private volatile ConsoleAssets loaded;

            @Override
            public ConsoleAssets get() {
                ConsoleAssets now = loaded;
                if (now == null) {
                    synchronized (this) {
                        now = loaded;
                        if (now == null) {
                            now = ConsoleAssets.load(loader, root);
                            loaded = now;
                        }
                    }
                }
                return now;
            }
        });
        handler.setHandler(requireNonNull(api, "api is null"));
        return handler;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        String path = request.getHttpURI().getPath();
        if (path == null || !(path.equals(PREFIX) || path.startsWith(PREFIX + "/"))) {
            return super.handle(request, response, callback);
        }
        var headers = response.getHeaders();
        headers.put(CSP);
        headers.put(NOSNIFF);
        headers.put(NO_REFERRER);
        headers.put(NO_FRAMES);
        headers.put(OPENER);
        String method = request.getMethod();
        boolean head = "HEAD".equals(method);
        if (!head && !"GET".equals(method)) {
            headers.put(HttpHeader.ALLOW, "GET, HEAD");
            return text(response, callback, 405, "method " + method + " not allowed for the console\n");
        }
        if (path.equals(PREFIX)) {
            headers.put(HttpHeader.LOCATION, PREFIX + "/");
            headers.put(NO_CACHE);
            return text(response, callback, 308, "");
        }
        String file = path.substring(PREFIX.length() + 1);
        if (file.isEmpty()) {
            file = "index.html";
        }
        ConsoleAssets all = assets.get();
        if (all.isEmpty()) {
            return text(response, callback, 503, "the console's files are not in this build of the server\n");
        }
        Optional<ConsoleAssets.Asset> found = all.find(file);
        if (found.isEmpty()) {
            return text(response, callback, 404, "not found\n");
        }
        ConsoleAssets.Asset asset = found.get();
        headers.put(asset.immutable() ? IMMUTABLE : NO_CACHE);
        headers.put(HttpHeader.CONTENT_TYPE, asset.contentType());
        byte[] body = asset.body();
        if (asset.gzip().isPresent()) {
            headers.put(VARY);
            if (acceptsGzip(request)) {
                headers.put(GZIP);
                body = asset.gzip().get();
            }
        }
        response.setStatus(200);
        headers.put(HttpHeader.CONTENT_LENGTH, body.length);
        if (head) {
            callback.succeeded();
        } else {
            response.write(true, ByteBuffer.wrap(body), callback);
        }
        return true;
    }

    private static boolean acceptsGzip(Request request) {
        for (String value : request.getHeaders().getCSV(HttpHeader.ACCEPT_ENCODING, false)) {
            String coding = value.strip();
            int semi = coding.indexOf(';');
            String name = semi < 0 ? coding : coding.substring(0, semi).strip();
            if (name.equalsIgnoreCase(HttpHeaderValue.GZIP.asString())) {
                return semi < 0 || !coding.substring(semi).replace(" ", "").equals(";q=0");
            }
        }
        return false;
    }

    private static boolean text(Response response, Callback callback, int status, String message) {
        byte[] body = message.getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.getHeaders().put(NO_CACHE);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }
}
