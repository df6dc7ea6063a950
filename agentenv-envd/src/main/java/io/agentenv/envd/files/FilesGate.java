package io.agentenv.envd.files;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.filesystem.FsError;
import io.agentenv.envd.filesystem.FsException;
import io.agentenv.envd.http.EnvdRequest;
import io.agentenv.envd.http.HttpException;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.users.Accounts;
import io.agentenv.envd.users.UnknownUserException;
import io.agentenv.envd.users.UserAccount;
import io.agentenv.envd.users.UserPaths;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What GET and POST {@code /files} check before touching the disk: the access token or a valid URL signature, then
 * the user; and how their paths resolve. Also the one place filesystem failures become {@code /files} statuses.
 */
final class FilesGate {
    static final String ACCESS_TOKEN_HEADER = "X-Access-Token";

    private final Accounts accounts;
    private final Session session;
    private final Clock clock;

    FilesGate(Accounts accounts, Session session, Clock clock) {
        this.accounts = requireNonNull(accounts, "accounts is null");
        this.session = requireNonNull(session, "session is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /** The checked request: who it runs as and the {@code path} query value, if any. */
    record Admitted(UserAccount user, Optional<String> path) {
        Admitted {
            requireNonNull(user, "user is null");
            requireNonNull(path, "path is null");
        }
    }

    Admitted admit(EnvdRequest request, UrlSignature.Operation operation) {
        Optional<String> path = request.query("path");
        Optional<String> username = request.query("username");
        checkAccess(
                request,
                path.orElse(""),
                operation,
                username,
                request.query("signature"),
                request.query("signature_expiration"));
        try {
            return new Admitted(accounts.resolve(username), path);
        } catch (UnknownUserException e) {
            throw HttpException.unauthorized(e.getMessage());
        }
    }

    /**
     * Lets the request through when no access token is set, when it carries the token, or when it carries a valid,
     * unexpired signature for exactly this path, operation and username (E2B's {@code validateSigning}).
     */
    void checkAccess(
            EnvdRequest request,
            String path,
            UrlSignature.Operation operation,
            Optional<String> username,
            Optional<String> signature,
            Optional<String> expiration) {
        Optional<String> token = session.current().accessToken();
        if (token.isEmpty()) {
            return;
        }
        String presented = request.header(ACCESS_TOKEN_HEADER);
        if (presented != null && !presented.isEmpty()) {
            if (!session.isAuthorized(presented)) {
                throw HttpException.unauthorized("access token present in header but does not match");
            }
            return;
        }
        if (signature.isEmpty()) {
            throw HttpException.unauthorized("missing signature query parameter");
        }
        OptionalLong expiresAt = OptionalLong.empty();
        if (expiration.isPresent()) {
            try {
                expiresAt = OptionalLong.of(Long.parseLong(expiration.get()));
            } catch (NumberFormatException e) {
                throw HttpException.badRequest("invalid signature_expiration: must be Unix seconds");
            }
        }
        String expected = UrlSignature.sign(path, operation, username.orElse(""), token.get(), expiresAt);
        if (!UrlSignature.matches(expected, signature.get())) {
            throw HttpException.unauthorized("invalid signature");
        }
        if (expiresAt.isPresent() && expiresAt.getAsLong() < clock.instant().getEpochSecond()) {
            throw HttpException.unauthorized("signature is already expired");
        }
    }

    Path resolve(String path, UserAccount user) {
        try {
            return UserPaths.resolve(path, user, session.current().defaultWorkdir());
        } catch (IllegalArgumentException e) {
            throw HttpException.badRequest("invalid path '" + path.replace("\0", "\\0") + "': " + e.getMessage());
        }
    }

    /** The {@code /files} status for each filesystem failure. */
    static HttpException toHttp(FsException e) {
        int status = switch (e.error()) {
            case INVALID_ARGUMENT, FAILED_PRECONDITION, ALREADY_EXISTS -> 400;
            case PERMISSION_DENIED -> 403;
            case NOT_FOUND -> 404;
            case NO_SPACE -> 507;
            case RESOURCE_EXHAUSTED, INTERNAL -> 500;
        };
        return new HttpException(status, e.getMessage());
    }

    static FsException noSuchFile(Path path) {
        return new FsException(FsError.NOT_FOUND, "path '" + path + "' does not exist");
    }
}
