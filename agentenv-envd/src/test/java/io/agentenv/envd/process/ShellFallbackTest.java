package io.agentenv.envd.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.envd.protocol.connect.RpcException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShellFallbackTest {
    @TempDir
    Path dir;

    @Test
    void a_missing_bash_is_replaced_by_the_first_shell_there_is() throws Exception {
        Path emptyPath = Files.createDirectories(dir.resolve("bin"));
        Path fallback = executable("fallback-sh");

        Path shell = ProcessService.executableOrShell(
                "bash", dir, emptyPath.toString(), List.of(dir.resolve("no-such-sh"), fallback));

        assertThat(shell).isEqualTo(fallback);
    }

    @Test
    void other_missing_programs_and_a_shell_without_fallback_stay_errors() throws Exception {
        Path emptyPath = Files.createDirectories(dir.resolve("bin"));
        Path fallback = executable("fallback-sh");

        assertThatThrownBy(
                        () -> ProcessService.executableOrShell("python3", dir, emptyPath.toString(), List.of(fallback)))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("executable file not found");
        assertThatThrownBy(() -> ProcessService.executableOrShell(
                        "sh", dir, emptyPath.toString(), List.of(dir.resolve("no-such-sh"))))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("executable file not found");
    }

    private Path executable(String name) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/bin/true\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }
}
