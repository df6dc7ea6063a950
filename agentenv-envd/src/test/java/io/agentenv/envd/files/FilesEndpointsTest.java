package io.agentenv.envd.files;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.agentenv.envd.connect.ConnectDispatch;
import io.agentenv.envd.connect.ConnectRouter;
import io.agentenv.envd.filesystem.LocalFilesystem;
import io.agentenv.envd.http.EnvdHandler;
import io.agentenv.envd.http.EnvdServer;
import io.agentenv.envd.http.HttpRoutes;
import io.agentenv.envd.session.InitRequest;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.users.Accounts;
import io.agentenv.envd.users.UserDirectory;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GET and POST /files through envd's real HTTP stack, as user "user" (uid 65534) whose home is a temp directory. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class FilesEndpointsTest {
    private static final Instant NOW = Instant.parse("2026-06-01T12:00:00Z");

    @TempDir
    Path temp;

    private Path home;
    private Session session;
    private EnvdServer server;
    private final HttpClient client = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws Exception {
        home = Files.createDirectory(temp.resolve("home"));
        Path passwd = Files.writeString(
                temp.resolve("passwd"),
                "root:x:0:0:root:/root:/bin/bash\nuser:x:65534:65534:user:" + home + ":/bin/bash\n"
                        + "other:x:65533:65533:other:" + temp.resolve("other") + ":/bin/bash\n");
        Path group = Files.writeString(temp.resolve("group"), "root:x:0:\nuser:x:65534:\nother:x:65533:\n");
        Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
        session = new Session(clock);
        Accounts accounts = new Accounts(new UserDirectory(passwd, group), session::defaultUser, "user");
        HttpRoutes routes = new HttpRoutes();
        new FilesEndpoints(new LocalFilesystem(), accounts, session, clock).register(routes);
        server = new EnvdServer(
                new InetSocketAddress("127.0.0.1", 0),
                Optional.empty(),
                new EnvdHandler(routes, new ConnectRouter(), new ConnectDispatch(clock), session),
                Duration.ofSeconds(1));
        server.start();
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        server.close();
    }

    private URI uri(String query) {
        return URI.create("http://127.0.0.1:" + server.tcpPort() + "/files" + query);
    }

    private static String q(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    private HttpResponse<byte[]> get(String query, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(query)).GET();
        if (headers.length > 0) {
            request.headers(headers);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private HttpResponse<String> post(String query, String contentType, byte[] body, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(query))
                .header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static byte[] multipart(String boundary, String... fileNamesAndContents) {
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < fileNamesAndContents.length; i += 2) {
            body.append("--")
                    .append(boundary)
                    .append("\r\n")
                    .append("Content-Disposition: form-data; name=\"file\"; filename=\"")
                    .append(fileNamesAndContents[i])
                    .append("\"\r\n")
                    .append("Content-Type: application/octet-stream\r\n\r\n")
                    .append(fileNamesAndContents[i + 1])
                    .append("\r\n");
        }
        body.append("--").append(boundary).append("--\r\n");
        return body.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static JsonObject json(String body) {
        return JsonParser.parseString(body).getAsJsonObject();
    }

    private static byte[] gzip(byte[] data) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(data);
        }
        return out.toByteArray();
    }

    @Test
    void get_returns_the_raw_bytes_of_a_file_relative_to_the_users_home() throws Exception {
        byte[] data = {0, 1, 2, (byte) 255, 10};
        Files.write(home.resolve("bin.dat"), data);

        HttpResponse<byte[]> response = get("?path=bin.dat");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo(data);
        assertThat(response.headers().firstValue("Content-Length")).contains("5");
    }

    @Test
    void get_of_an_empty_file_is_an_empty_200() throws Exception {
        Files.createFile(home.resolve("empty"));

        HttpResponse<byte[]> response = get("?path=" + q(home.resolve("empty").toString()));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEmpty();
    }

    @Test
    void get_gzips_when_the_client_accepts_it() throws Exception {
        Files.writeString(home.resolve("a.txt"), "hello hello hello");

        HttpResponse<byte[]> response = get("?path=a.txt", "Accept-Encoding", "gzip");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Encoding")).contains("gzip");
        assertThat(new GZIPInputStream(new java.io.ByteArrayInputStream(response.body())).readAllBytes())
                .asString(StandardCharsets.UTF_8)
                .isEqualTo("hello hello hello");
    }

    @Test
    void get_serves_a_single_byte_range_as_206() throws Exception {
        Files.writeString(home.resolve("r.txt"), "0123456789");

        HttpResponse<byte[]> response = get("?path=r.txt", "Range", "bytes=2-4", "Accept-Encoding", "gzip");

        assertThat(response.statusCode()).isEqualTo(206);
        assertThat(new String(response.body(), StandardCharsets.UTF_8)).isEqualTo("234");
        assertThat(response.headers().firstValue("Content-Range")).contains("bytes 2-4/10");
        assertThat(response.headers().firstValue("Content-Encoding")).isEmpty();
    }

    @Test
    void get_answers_304_when_the_file_is_not_newer_than_if_modified_since() throws Exception {
        Files.writeString(home.resolve("c.txt"), "cached");
        String lastModified =
                get("?path=c.txt").headers().firstValue("Last-Modified").orElseThrow();

        HttpResponse<byte[]> response = get("?path=c.txt", "If-Modified-Since", lastModified);

        assertThat(response.statusCode()).isEqualTo(304);
        assertThat(response.body()).isEmpty();
    }

    @Test
    void get_of_an_unsatisfiable_range_is_416() throws Exception {
        Files.writeString(home.resolve("r.txt"), "0123");

        assertThat(get("?path=r.txt", "Range", "bytes=10-20").statusCode()).isEqualTo(416);
    }

    @Test
    void get_errors_are_json_with_an_integer_code() throws Exception {
        Files.createDirectory(home.resolve("dir"));

        HttpResponse<byte[]> missing = get("?path=nope.txt");
        HttpResponse<byte[]> directory = get("?path=dir");
        HttpResponse<byte[]> unknownUser = get("?path=x&username=ghost");

        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(json(new String(missing.body(), StandardCharsets.UTF_8))
                        .get("code")
                        .getAsInt())
                .isEqualTo(404);
        assertThat(directory.statusCode()).isEqualTo(400);
        assertThat(unknownUser.statusCode()).isEqualTo(401);
    }

    @Test
    void multipart_upload_to_a_path_creates_parents_owned_by_the_user() throws Exception {
        HttpResponse<String> response = post(
                "?path=" + q("sub/dir/a.txt"),
                "multipart/form-data; boundary=XyZ",
                multipart("XyZ", "a.txt", "content"));

        assertThat(response.statusCode()).isEqualTo(200);
        Path written = home.resolve("sub/dir/a.txt");
        assertThat(written).hasContent("content");
        assertThat(JsonParser.parseString(response.body()))
                .isEqualTo(JsonParser.parseString(
                        "[{\"path\":\"" + written + "\",\"name\":\"a.txt\",\"type\":\"file\"}]"));
        for (Path p : new Path[] {home.resolve("sub"), home.resolve("sub/dir"), written}) {
            assertThat(Files.getAttribute(p, "unix:uid")).isEqualTo(65534);
        }
    }

    @Test
    void multipart_upload_without_a_path_writes_every_part_to_its_full_path_file_name() throws Exception {
        Path other = Files.createDirectory(temp.resolve("elsewhere"));

        HttpResponse<String> response = post(
                "",
                "multipart/form-data; boundary=b0undary",
                multipart("b0undary", "c.txt", "see", other.resolve("d.txt").toString(), "dee"));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(home.resolve("c.txt")).hasContent("see");
        assertThat(other.resolve("d.txt")).hasContent("dee");
        JsonArray entries = JsonParser.parseString(response.body()).getAsJsonArray();
        assertThat(entries).hasSize(2);
        assertThat(entries.get(1).getAsJsonObject().get("path").getAsString())
                .isEqualTo(other.resolve("d.txt").toString());
    }

    @Test
    void a_chunked_multipart_body_larger_than_the_parse_buffer_is_streamed_to_disk_intact() throws Exception {
        byte[] big = new byte[300 * 1024 + 7];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31 + i / 1024);
        }
        String head = "--Bnd\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n";
        byte[] tail = "\r\n--Bnd--\r\n".getBytes(StandardCharsets.UTF_8);
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        body.write(head.getBytes(StandardCharsets.UTF_8));
        body.write(big);
        body.write(tail);
        byte[] bytes = body.toByteArray();
        // an InputStream publisher has no length: the client sends the body with Transfer-Encoding: chunked
        HttpRequest request = HttpRequest.newBuilder(uri(""))
                .header("Content-Type", "multipart/form-data; boundary=Bnd")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(bytes)))
                .build();

        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(Files.readAllBytes(home.resolve("big.bin"))).isEqualTo(big);
    }

    @Test
    void an_upload_refused_half_way_gets_its_error_with_megabytes_of_body_still_unsent() throws Exception {
        byte[] rest = new byte[32 << 20]; // the second part, sent after envd has already refused the request
        String parts = "--Q\r\nContent-Disposition: form-data; name=\"file\"; filename=\"same.txt\"\r\n\r\nfirst\r\n"
                + "--Q\r\nContent-Disposition: form-data; name=\"file\"; filename=\"same.txt\"\r\n\r\n";
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        body.write(parts.getBytes(StandardCharsets.UTF_8));
        body.write(rest);
        body.write("\r\n--Q--\r\n".getBytes(StandardCharsets.UTF_8));

        for (int attempt = 0; attempt < 5; attempt++) {
            HttpResponse<String> response = post("", "multipart/form-data; boundary=Q", body.toByteArray());

            assertThat(response.statusCode()).isEqualTo(400);
            assertThat(response.body()).contains("you cannot upload multiple files to the same path");
        }
    }

    @Test
    void multipart_upload_of_two_parts_to_one_path_is_rejected() throws Exception {
        HttpResponse<String> response =
                post("?path=same.txt", "multipart/form-data; boundary=B", multipart("B", "x", "1", "y", "2"));

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(json(response.body()).get("message").getAsString()).contains("multiple files to the same path");
    }

    @Test
    void uploads_overwrite_existing_files_and_refuse_directories() throws Exception {
        Files.writeString(home.resolve("f.txt"), "a much longer old content");
        Files.createDirectory(home.resolve("d"));

        assertThat(post("?path=f.txt", "application/octet-stream", "new".getBytes(StandardCharsets.UTF_8))
                        .statusCode())
                .isEqualTo(200);
        assertThat(post("?path=d", "application/octet-stream", "x".getBytes(StandardCharsets.UTF_8))
                        .statusCode())
                .isEqualTo(400);
        assertThat(home.resolve("f.txt")).hasContent("new");
    }

    @Test
    void octet_stream_upload_accepts_a_gzip_body() throws Exception {
        byte[] data = "compressed on the wire".getBytes(StandardCharsets.UTF_8);

        HttpResponse<String> response =
                post("?path=z.txt", "application/octet-stream", gzip(data), "Content-Encoding", "gzip");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(Files.readAllBytes(home.resolve("z.txt"))).isEqualTo(data);
    }

    @Test
    void octet_stream_upload_needs_a_path_and_a_supported_coding() throws Exception {
        assertThat(post("", "application/octet-stream", new byte[] {1}).statusCode())
                .isEqualTo(400);
        assertThat(post("?path=a", "application/octet-stream", new byte[] {1}, "Content-Encoding", "br")
                        .statusCode())
                .isEqualTo(400);
        assertThat(post("?path=a", "text/plain", new byte[] {1}).statusCode()).isEqualTo(400);
    }

    @Test
    void malformed_bodies_are_bad_requests() throws Exception {
        assertThat(post("?path=a", "multipart/form-data; boundary=B", "no parts here".getBytes(StandardCharsets.UTF_8))
                        .statusCode())
                .isEqualTo(400);
        assertThat(post("?path=a", "multipart/form-data", multipart("B", "a", "x"))
                        .statusCode())
                .isEqualTo(400);
        assertThat(post(
                                "?path=a",
                                "application/octet-stream",
                                "not gzip".getBytes(StandardCharsets.UTF_8),
                                "Content-Encoding",
                                "gzip")
                        .statusCode())
                .isEqualTo(400);
    }

    @Test
    void a_full_disk_is_507() throws Exception {
        // /dev/full fails every write with ENOSPC; as root the ownership change is a no-op on it
        HttpResponse<String> response =
                post("?path=/dev/full&username=root", "application/octet-stream", new byte[] {1, 2, 3});

        assertThat(response.statusCode()).isEqualTo(507);
        assertThat(json(response.body()).get("code").getAsInt()).isEqualTo(507);
    }

    @Test
    void metadata_headers_are_stored_as_user_xattrs_and_echoed_back() throws Exception {
        HttpResponse<String> response = post(
                "?path=m.txt",
                "application/octet-stream",
                new byte[] {1},
                "X-Metadata-Author",
                "ada",
                "x-metadata-purpose",
                "test");

        assertThat(response.statusCode()).isEqualTo(200);
        JsonObject metadata = JsonParser.parseString(response.body())
                .getAsJsonArray()
                .get(0)
                .getAsJsonObject()
                .getAsJsonObject("metadata");
        assertThat(metadata.get("author").getAsString()).isEqualTo("ada");
        assertThat(metadata.get("purpose").getAsString()).isEqualTo("test");
        UserDefinedFileAttributeView view =
                Files.getFileAttributeView(home.resolve("m.txt"), UserDefinedFileAttributeView.class);
        assertThat(view.list()).contains("e2b.author", "e2b.purpose");
    }

    @Test
    void an_upload_replaces_the_previous_metadata() throws Exception {
        post("?path=m.txt", "application/octet-stream", new byte[] {1}, "X-Metadata-Old", "1");

        post("?path=m.txt", "application/octet-stream", new byte[] {1}, "X-Metadata-New", "2");

        UserDefinedFileAttributeView view =
                Files.getFileAttributeView(home.resolve("m.txt"), UserDefinedFileAttributeView.class);
        assertThat(view.list()).contains("e2b.new").doesNotContain("e2b.old");
    }

    @Test
    void with_a_token_set_a_request_without_token_or_signature_is_refused() throws Exception {
        Files.writeString(home.resolve("s.txt"), "secret");
        session.init(
                new InitRequest(Optional.of("tok"), Map.of(), Optional.empty(), Optional.empty(), Optional.empty()));

        HttpResponse<byte[]> response = get("?path=s.txt");

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(json(new String(response.body(), StandardCharsets.UTF_8))
                        .get("message")
                        .getAsString())
                .isEqualTo("missing signature query parameter");
        assertThat(get("?path=s.txt", "X-Access-Token", "tok").statusCode()).isEqualTo(200);
        assertThat(get("?path=s.txt", "X-Access-Token", "wrong").statusCode()).isEqualTo(401);
    }

    @Test
    void a_valid_signature_reads_and_writes_without_the_token() throws Exception {
        Files.writeString(home.resolve("s.txt"), "signed");
        session.init(
                new InitRequest(Optional.of("tok"), Map.of(), Optional.empty(), Optional.empty(), Optional.empty()));
        long expiration = NOW.getEpochSecond() + 60;
        String read = UrlSignature.sign("s.txt", UrlSignature.Operation.READ, "", "tok", OptionalLong.of(expiration));
        String write = UrlSignature.sign("w.txt", UrlSignature.Operation.WRITE, "", "tok", OptionalLong.empty());

        HttpResponse<byte[]> got = get("?path=s.txt&signature=" + q(read) + "&signature_expiration=" + expiration);
        HttpResponse<String> put = post(
                "?path=w.txt&signature=" + q(write),
                "multipart/form-data; boundary=B",
                multipart("B", "blob", "file content"));

        assertThat(got.statusCode()).isEqualTo(200);
        assertThat(new String(got.body(), StandardCharsets.UTF_8)).isEqualTo("signed");
        assertThat(put.statusCode()).isEqualTo(200);
        assertThat(home.resolve("w.txt")).hasContent("file content");
    }

    @Test
    void an_expired_signature_gets_exactly_e2bs_401_body() throws Exception {
        Files.writeString(home.resolve("s.txt"), "x");
        session.init(
                new InitRequest(Optional.of("tok"), Map.of(), Optional.empty(), Optional.empty(), Optional.empty()));
        long expiration = NOW.getEpochSecond() - 10;
        String signature =
                UrlSignature.sign("s.txt", UrlSignature.Operation.READ, "", "tok", OptionalLong.of(expiration));

        HttpResponse<byte[]> response =
                get("?path=s.txt&signature=" + q(signature) + "&signature_expiration=" + expiration);

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(JsonParser.parseString(new String(response.body(), StandardCharsets.UTF_8)))
                .isEqualTo(JsonParser.parseString("{\"code\":401,\"message\":\"signature is already expired\"}"));
    }

    @Test
    void a_signature_for_another_path_operation_or_user_is_invalid() throws Exception {
        Files.writeString(home.resolve("s.txt"), "x");
        session.init(
                new InitRequest(Optional.of("tok"), Map.of(), Optional.empty(), Optional.empty(), Optional.empty()));
        String forOtherPath = UrlSignature.sign("t.txt", UrlSignature.Operation.READ, "", "tok", OptionalLong.empty());
        String forWrite = UrlSignature.sign("s.txt", UrlSignature.Operation.WRITE, "", "tok", OptionalLong.empty());
        String forRoot = UrlSignature.sign("s.txt", UrlSignature.Operation.READ, "root", "tok", OptionalLong.empty());

        for (String signature : new String[] {forOtherPath, forWrite, forRoot}) {
            HttpResponse<byte[]> response = get("?path=s.txt&signature=" + q(signature));
            assertThat(response.statusCode()).isEqualTo(401);
            assertThat(new String(response.body(), StandardCharsets.UTF_8)).contains("invalid signature");
        }
    }

    @Test
    void another_users_relative_paths_resolve_against_their_home_not_the_default_workdir() throws Exception {
        Path otherHome = Files.createDirectory(temp.resolve("other"));
        session.init(new InitRequest(
                Optional.of("tok"), Map.of(), Optional.empty(), Optional.of(home.toString()), Optional.empty()));

        HttpResponse<String> put = post(
                "?path=hello.txt&username=other",
                "multipart/form-data; boundary=B",
                multipart("B", "hello.txt", "as other"),
                "X-Access-Token",
                "tok");
        HttpResponse<byte[]> got = get("?path=" + q("~/hello.txt") + "&username=other", "X-Access-Token", "tok");
        String write =
                UrlSignature.sign("signed.txt", UrlSignature.Operation.WRITE, "other", "tok", OptionalLong.empty());
        HttpResponse<String> signed = post(
                "?path=signed.txt&username=other&signature=" + q(write),
                "application/octet-stream",
                "signed".getBytes(StandardCharsets.UTF_8));

        assertThat(put.statusCode()).isEqualTo(200);
        assertThat(JsonParser.parseString(put.body())
                        .getAsJsonArray()
                        .get(0)
                        .getAsJsonObject()
                        .get("path")
                        .getAsString())
                .isEqualTo(otherHome.resolve("hello.txt").toString());
        assertThat(new String(got.body(), StandardCharsets.UTF_8)).isEqualTo("as other");
        assertThat(signed.statusCode()).isEqualTo(200);
        assertThat(otherHome.resolve("signed.txt")).hasContent("signed");
        assertThat(home.resolve("hello.txt")).doesNotExist();
        assertThat(home.resolve("signed.txt")).doesNotExist();
    }
}
