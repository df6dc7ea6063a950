package io.agentenv.cli;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import io.agentenv.api.model.VolumeEntryStat;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.LongFunction;

/**
 * The content routes of one volume ({@code /volumecontent/{volumeID}/...} on the API URL), authorised with the volume's
 * token as {@code Authorization: Bearer} (never the API key). Paths are the volume's own, {@code /} its root. Errors are
 * {@link ApiException}s with the server's message; file bodies are streamed, never held in memory.
 */
final class VolumeContentClient {
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration TRANSFER_TIMEOUT = Duration.ofMinutes(10);
    private static final int CHUNK = 64 * 1024;

    private final URI base;
    private final String volumeId;
    private final String token;

    VolumeContentClient(URI base, String volumeId, String token) {
        this.base = requireNonNull(base, "base is null");
        this.volumeId = requireNonNull(volumeId, "volumeId is null");
        this.token = requireNonNull(token, "token is null");
    }

    /** {@code GET dir}: the entries below the directory {@code path}, {@code depth} levels down. */
    List<VolumeEntryStat> list(String path, int depth) {
        HttpURLConnection c = open("GET", "dir", path, "&depth=" + depth, REQUEST_TIMEOUT);
        return read(c, 200, new TypeReference<List<VolumeEntryStat>>() {});
    }

    /** {@code POST dir}: makes the directory; with {@code parents} its missing parents too, and one that exists is fine. */
    VolumeEntryStat makeDir(String path, boolean parents) {
        HttpURLConnection c = open("POST", "dir", path, parents ? "&force=true" : "", REQUEST_TIMEOUT);
        return read(c, 201, new TypeReference<VolumeEntryStat>() {});
    }

    /** {@code GET path}: one entry (a link is shown as a link). */
    VolumeEntryStat stat(String path) {
        return read(open("GET", "path", path, "", REQUEST_TIMEOUT), 200, new TypeReference<VolumeEntryStat>() {});
    }

    /** {@code DELETE path}: a file, a link, or a directory with everything below it. */
    void remove(String path) {
        HttpURLConnection c = open("DELETE", "path", path, "", REQUEST_TIMEOUT);
        expect(c, 204);
        c.disconnect();
    }

    /**
     * {@code PUT file}: writes {@code in}'s bytes to {@code path} (parents are made, a file there is replaced);
     * {@code length} is sent as the Content-Length, or {@code -1} when unknown (a chunked body). {@code in} is read to
     * its end and left open.
     */
    VolumeEntryStat write(String path, long length, InputStream in) {
        HttpURLConnection c = open("PUT", "file", path, "", TRANSFER_TIMEOUT);
        c.setRequestProperty("Content-Type", "application/octet-stream");
        c.setDoOutput(true);
        if (length >= 0) {
            c.setFixedLengthStreamingMode(length);
        } else {
            c.setChunkedStreamingMode(CHUNK);
        }
        try (OutputStream out = c.getOutputStream()) {
            in.transferTo(out);
        } catch (IOException e) {
            // the server may have answered early (a refused upload): then its answer says why
            if (status(c) < 400) {
                throw new ApiException(0, "cannot upload to " + Printable.of(path) + ": " + ApiException.describe(e));
            }
        }
        return read(c, 200, new TypeReference<VolumeEntryStat>() {});
    }

    /** {@code GET file}: the bytes of {@code path}, into the stream {@code sink} gives for the length (-1: unknown). */
    void read(String path, LongFunction<OutputStream> sink) {
        HttpURLConnection c = open("GET", "file", path, "", TRANSFER_TIMEOUT);
        expect(c, 200);
        try (InputStream in = c.getInputStream()) {
            OutputStream out = sink.apply(c.getContentLengthLong());
            in.transferTo(out);
            out.flush();
        } catch (IOException e) {
            throw new ApiException(0, "cannot download " + Printable.of(path) + ": " + ApiException.describe(e));
        }
    }

    private HttpURLConnection open(String method, String route, String path, String query, Duration timeout) {
        URI uri = base.resolve("/volumecontent/" + ApiClient.segment(volumeId) + "/" + route + "?path="
                + ApiClient.segment(path) + query);
        try {
            HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
            c.setRequestMethod(method);
            c.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
            c.setReadTimeout((int) timeout.toMillis());
            c.setInstanceFollowRedirects(false);
            c.setUseCaches(false);
            c.setRequestProperty("Authorization", "Bearer " + token);
            c.setRequestProperty("Accept", "application/json");
            return c;
        } catch (IOException e) {
            throw failed(e);
        }
    }

    private <T> T read(HttpURLConnection c, int status, TypeReference<T> type) {
        expect(c, status);
        try (InputStream in = c.getInputStream()) {
            return JsonMappers.WIRE.readValue(in, type);
        } catch (JsonProcessingException e) {
            throw new ApiException(status, "unexpected response: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw failed(e);
        }
    }

    /** Throws the server's error unless it answered {@code status}. */
    private void expect(HttpURLConnection c, int status) {
        int actual;
        try {
            actual = c.getResponseCode();
        } catch (IOException e) {
            throw failed(e);
        }
        if (actual == status) {
            return;
        }
        String body = "";
        InputStream in = c.getErrorStream();
        if (in != null) {
            try (in) {
                body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                body = "";
            }
        }
        String message = ApiClient.message(actual, body);
        if (actual == 401) {
            message = message + " (the volume's token was refused)";
        }
        throw new ApiException(actual, message);
    }

    private static int status(HttpURLConnection c) {
        try {
            return c.getResponseCode();
        } catch (IOException e) {
            return -1;
        }
    }

    private ApiException failed(IOException e) {
        return new ApiException(0, "cannot reach " + base + ": " + ApiException.describe(e));
    }
}
