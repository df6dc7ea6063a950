package io.agentenv.envd.users;

import static java.util.Objects.requireNonNull;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * Chooses the account a request runs as: the user the client named (Basic auth user or {@code username} query), else
 * the sandbox's default user from {@code POST /init}, else the account envd itself runs as.
 */
public final class Accounts {
    private final UserDirectory directory;
    private final Supplier<Optional<String>> sessionDefaultUser;
    private final String fallbackUser;

    public Accounts(UserDirectory directory, Supplier<Optional<String>> sessionDefaultUser, String fallbackUser) {
        this.directory = requireNonNull(directory, "directory is null");
        this.sessionDefaultUser = requireNonNull(sessionDefaultUser, "sessionDefaultUser is null");
        this.fallbackUser = requireNonNull(fallbackUser, "fallbackUser is null");
    }

    /**
     * The account a request runs as: the requested user, else the session's default user, else the fallback user.
     *
     * @throws UnknownUserException when the chosen name has no account
     */
    public UserAccount resolve(Optional<String> requested) {
        String name = requested
                .filter(n -> !n.isEmpty())
                .or(() -> sessionDefaultUser.get().filter(n -> !n.isEmpty()))
                .orElse(fallbackUser);
        return directory.find(name).orElseThrow(() -> new UnknownUserException(name));
    }
}
