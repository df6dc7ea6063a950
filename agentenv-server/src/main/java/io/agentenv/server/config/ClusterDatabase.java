package io.agentenv.server.config;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * The cluster's PostgreSQL database, shared by its nodes and gateways.
 *
 * @param url its JDBC URL ({@code AENV_CLUSTER_DATABASE_URL}, {@code jdbc:postgresql://host:port/name})
 * @param user the role to log in as ({@code AENV_CLUSTER_DATABASE_USER}, default {@code agentenv})
 * @param password the role's password, read from the file {@code AENV_CLUSTER_DATABASE_PASSWORD_FILE} (trailing line
 *     breaks dropped); empty: none (peer or trust authentication)
 */
public record ClusterDatabase(String url, String user, Optional<String> password) {
    public static final String URL = "AENV_CLUSTER_DATABASE_URL";
    public static final String USER = "AENV_CLUSTER_DATABASE_USER";
    public static final String PASSWORD_FILE = "AENV_CLUSTER_DATABASE_PASSWORD_FILE";

    public ClusterDatabase {
        requireNonNull(url, "url is null");
        requireNonNull(user, "user is null");
        requireNonNull(password, "password is null");
        if (!url.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException(URL + " must be a PostgreSQL JDBC URL (jdbc:postgresql://host:port/db)");
        }
    }

    @Override
    public String toString() {
        return "ClusterDatabase[url=" + url + ", user=" + user + ", password="
                + (password.isPresent() ? "<set>" : "none") + "]";
    }

    /** The database named by {@code values}; empty when {@link #URL} is not set. */
    static Optional<ClusterDatabase> from(Map<String, String> values) {
        String url = values.get(URL);
        if (url == null) {
            return Optional.empty();
        }
        Optional<String> password = Optional.ofNullable(values.get(PASSWORD_FILE))
                .map(file -> {
                    try {
                        return Files.readString(Path.of(file), StandardCharsets.UTF_8)
                                .stripTrailing();
                    } catch (IOException e) {
                        throw new UncheckedIOException("cannot read " + PASSWORD_FILE + " " + file, e);
                    }
                });
        return Optional.of(new ClusterDatabase(url, values.getOrDefault(USER, "agentenv"), password));
    }
}
