package io.agentenv.backend.container.host;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Lets the sandboxes' root id through the directories above what their runtime mounts. runc and CRIU mount a sandbox's
 * rootfs and bound files as root of its user namespace, an unprivileged host id ({@link GuestIds}), so every directory
 * on the way must let that id pass. A directory that denies others gets one POSIX ACL entry, {@code user:<id>:x}
 * ({@code setfacl}, Debian's {@code acl}): that id may pass (not list), and other host users stay out as before.
 */
public final class GuestPassage {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private GuestPassage() {}

    /** Grants the guests' root passage through {@code dir} and every directory above it that denies others. */
    public static void grant(ProcessRunner runner, GuestIds ids, Path dir)
            throws IOException, CommandFailedException, InterruptedException {
        requireNonNull(runner, "runner is null");
        List<String> closed = new ArrayList<>();
        for (Path d = dir.toRealPath(); d != null; d = d.getParent()) {
            if (!Files.getPosixFilePermissions(d).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                closed.add(d.toString());
            }
        }
        if (closed.isEmpty()) {
            return;
        }
        List<String> argv = new ArrayList<>(List.of("setfacl", "-m", "u:" + ids.host(0) + ":x"));
        argv.addAll(closed);
        runner.run(Command.of(TIMEOUT, argv));
    }
}
