package io.agentenv.envd.users;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.List;

/**
 * A local account as {@code /etc/passwd} and {@code /etc/group} describe it.
 *
 * @param groups every group the account belongs to (its primary group first), as {@code initgroups(3)} would set
 */
public record UserAccount(String name, int uid, int gid, List<Integer> groups, Path home, String shell) {
    public UserAccount {
        requireNonNull(name, "name is null");
        requireNonNull(home, "home is null");
        requireNonNull(shell, "shell is null");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("name is empty");
        }
        if (uid < 0 || gid < 0) {
            throw new IllegalArgumentException("uid and gid must not be negative: " + uid + ", " + gid);
        }
        if (!home.isAbsolute()) {
            throw new IllegalArgumentException("home must be absolute: " + home);
        }
        groups = List.copyOf(groups);
    }

    public boolean isRoot() {
        return uid == 0;
    }
}
