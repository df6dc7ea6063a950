package io.agentenv.envd.process;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.users.UserAccount;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything needed to start one process.
 *
 * @param executable the resolved absolute path of {@code config.cmd}
 * @param env        the complete environment (nothing is inherited from envd)
 */
record LaunchSpec(
        ProcessConfig config,
        UserAccount user,
        Path executable,
        List<String> args,
        Path cwd,
        Map<String, String> env,
        Optional<PtySize> pty,
        boolean stdin,
        Optional<String> tag) {
    LaunchSpec {
        requireNonNull(config, "config is null");
        requireNonNull(user, "user is null");
        requireNonNull(executable, "executable is null");
        requireNonNull(cwd, "cwd is null");
        requireNonNull(pty, "pty is null");
        requireNonNull(tag, "tag is null");
        args = List.copyOf(args);
        env = Map.copyOf(env);
        if (!executable.isAbsolute() || !cwd.isAbsolute()) {
            throw new IllegalArgumentException("executable and cwd must be absolute");
        }
    }

    record PtySize(int cols, int rows) {
        PtySize {
            if (cols < 1 || rows < 1 || cols > 65535 || rows > 65535) {
                throw new IllegalArgumentException("pty size must be between 1 and 65535: " + cols + "x" + rows);
            }
        }
    }
}
