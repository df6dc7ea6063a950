package io.agentenv.backend.container.lifecycle;

import io.agentenv.backend.container.guest.EnvdLayout;
import io.agentenv.backend.container.runtime.RuncLogs;
import io.agentenv.backend.container.storage.SandboxDirs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;

/** envd's log inside a sandbox's filesystem, read for error messages. */
final class EnvdLogs {

    private EnvdLogs() {}

    /**
     * The last lines of envd's log inside a sandbox's filesystem, for error messages. Only for filesystems no user code
     * has written yet (a template's boot, a launch from a template): a sandbox's own files are untrusted, and a symlink
     * there must never make the host read one of its own files. Even so the path must resolve inside the upper dir.
     */
    static String tail(SandboxDirs dirs) {
        Path logFile = dirs.upper().resolve(EnvdLayout.ENVD_LOG.substring(1));
        try {
            if (!Files.isRegularFile(logFile, LinkOption.NOFOLLOW_LINKS)
                    || !logFile.toRealPath().startsWith(dirs.upper().toRealPath())) {
                return "(no envd log)";
            }
            List<String> lines = RuncLogs.tailLines(logFile, 64 * 1024); // bounded: a wedged envd can log without end
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException | RuntimeException e) {
            return "(envd log unreadable: " + e.getMessage() + ")";
        }
    }
}
