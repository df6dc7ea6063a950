package io.agentenv.envd.files;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.filesystem.LocalFilesystem;
import io.agentenv.envd.http.Access;
import io.agentenv.envd.http.HttpRoutes;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.users.Accounts;
import java.time.Clock;

/**
 * GET and POST {@code /files}. Both check access themselves ({@link Access#SELF_CHECKED}): the access token, or a v1
 * URL signature, once {@code POST /init} has set a token.
 */
public final class FilesEndpoints {
    private final FileDownload download;
    private final FileUpload upload;

    public FilesEndpoints(LocalFilesystem filesystem, Accounts accounts, Session session, Clock clock) {
        requireNonNull(filesystem, "filesystem is null");
        FilesGate gate = new FilesGate(accounts, session, clock);
        this.download = new FileDownload(gate);
        this.upload = new FileUpload(gate, filesystem);
    }

    public void register(HttpRoutes routes) {
        routes.add("GET", "/files", Access.SELF_CHECKED, download);
        routes.add("POST", "/files", Access.SELF_CHECKED, upload);
    }
}
