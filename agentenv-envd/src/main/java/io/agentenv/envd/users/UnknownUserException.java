package io.agentenv.envd.users;

/** The requested user has no entry in the account database. The message is safe to show to the caller. */
public final class UnknownUserException extends RuntimeException {
    public UnknownUserException(String user) {
        super("invalid user: '" + user + "'");
    }
}
