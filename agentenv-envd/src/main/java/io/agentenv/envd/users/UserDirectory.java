package io.agentenv.envd.users;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Looks accounts up in passwd/group files. The files are read on every lookup: they are small, and accounts added at
 * run time (useradd inside the sandbox) must be visible at once. A missing file lists nobody, and root is known even
 * where no file lists it (an image without {@code /etc/passwd}), so that envd can still run commands as root there.
 */
public final class UserDirectory {
    private final Path passwd;
    private final Path group;

    public UserDirectory(Path passwd, Path group) {
        this.passwd = requireNonNull(passwd, "passwd is null");
        this.group = requireNonNull(group, "group is null");
    }

    public static UserDirectory system() {
        return new UserDirectory(Path.of("/etc/passwd"), Path.of("/etc/group"));
    }

    public Optional<UserAccount> find(String name) {
        requireNonNull(name, "name is null");
        return findEntry(fields -> fields[0].equals(name)).or(() -> name.equals("root") ? root() : Optional.empty());
    }

    public Optional<UserAccount> findByUid(int uid) {
        String wanted = Integer.toString(uid);
        return findEntry(fields -> fields[2].equals(wanted)).or(() -> uid == 0 ? root() : Optional.empty());
    }

    /** Root as every system has it, for a system whose files do not list it. */
    private Optional<UserAccount> root() {
        return Optional.of(new UserAccount("root", 0, 0, groupsOf("root", 0), Path.of("/root"), "/bin/sh"));
    }

    private Optional<UserAccount> findEntry(java.util.function.Predicate<String[]> match) {
        for (String line : lines(passwd)) {
            String[] fields = line.split(":", -1);
            if (fields.length < 7 || !match.test(fields)) {
                continue;
            }
            try {
                int uid = Integer.parseInt(fields[2]);
                int gid = Integer.parseInt(fields[3]);
                String home = fields[5].isEmpty() ? "/" : fields[5];
                return Optional.of(
                        new UserAccount(fields[0], uid, gid, groupsOf(fields[0], gid), Path.of(home), fields[6]));
            } catch (IllegalArgumentException e) {
                return Optional.empty(); // malformed entry: treat the user as unknown
            }
        }
        return Optional.empty();
    }

    /** Primary group first, then every group that lists the user as a member. */
    private List<Integer> groupsOf(String user, int primary) {
        List<Integer> groups = new ArrayList<>();
        groups.add(primary);
        for (String line : lines(group)) {
            String[] fields = line.split(":", -1);
            if (fields.length < 4) {
                continue;
            }
            for (String member : fields[3].split(",")) {
                if (member.strip().equals(user)) {
                    try {
                        int gid = Integer.parseInt(fields[2]);
                        if (!groups.contains(gid)) {
                            groups.add(gid);
                        }
                    } catch (NumberFormatException e) {
                        // skip a malformed group line
                    }
                    break;
                }
            }
        }
        return groups;
    }

    private static List<String> lines(Path file) {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8).stream()
                    .filter(l -> !l.isBlank() && !l.startsWith("#"))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
