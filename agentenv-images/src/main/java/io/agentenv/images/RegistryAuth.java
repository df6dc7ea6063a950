package io.agentenv.images;

import java.util.Objects;

/**
 * Credentials for one registry: a user name and a password or access token. Handed to skopeo only through a
 * mode-0600 auth file that is deleted after the call; never on a command line, and {@link #toString()} hides the
 * password.
 */
public record RegistryAuth(String username, String password) {

    public RegistryAuth {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(password, "password");
        if (username.isEmpty() || username.indexOf(':') >= 0) {
            throw new IllegalArgumentException("a registry user name must be non-empty and without ':'");
        }
        if (password.isEmpty()) {
            throw new IllegalArgumentException("a registry password must not be empty");
        }
    }

    @Override
    public String toString() {
        return "RegistryAuth[username=" + username + ", password=***]";
    }
}
