package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class FsExceptionTest {
    @Test
    void io_failures_are_classified_by_their_cause() {
        assertThat(FsException.of(new NoSuchFileException("/a"), "x", "/a").error())
                .isEqualTo(FsError.NOT_FOUND);
        assertThat(FsException.of(new FileAlreadyExistsException("/a"), "x", "/a")
                        .error())
                .isEqualTo(FsError.ALREADY_EXISTS);
        assertThat(FsException.of(new AccessDeniedException("/a"), "x", "/a").error())
                .isEqualTo(FsError.PERMISSION_DENIED);
        assertThat(FsException.of(new DirectoryNotEmptyException("/a"), "x", "/a")
                        .error())
                .isEqualTo(FsError.FAILED_PRECONDITION);
        assertThat(FsException.of(new FileSystemException("/a", null, "No space left on device"), "x", "/a")
                        .error())
                .isEqualTo(FsError.NO_SPACE);
        assertThat(FsException.of(new IOException("No space left on device"), "x", "/a")
                        .error())
                .isEqualTo(FsError.NO_SPACE);
        assertThat(FsException.of(new FileSystemException("/a", null, "Not a directory"), "x", "/a")
                        .error())
                .isEqualTo(FsError.INVALID_ARGUMENT);
        assertThat(FsException.of(new IOException("Input/output error"), "x", "/a")
                        .error())
                .isEqualTo(FsError.INTERNAL);
    }

    @Test
    void the_client_message_names_the_action_and_path_but_not_the_exception() {
        FsException e = FsException.of(new IOException("internal detail"), "error reading file", "/home/user/a");

        assertThat(e.getMessage()).isEqualTo("error reading file '/home/user/a': I/O error");
    }
}
