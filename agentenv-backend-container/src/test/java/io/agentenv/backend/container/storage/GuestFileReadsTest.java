package io.agentenv.backend.container.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link GuestFileReads} on files in a temporary directory (open/lseek/read/close over FFM, errno in the errors). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class GuestFileReadsTest {

    @TempDir
    Path dir;

    @Test
    void the_tail_of_a_file_longer_than_the_limit_is_its_last_bytes() throws IOException {
        Path file = Files.writeString(dir.resolve("log"), "0123456789");
        ByteArrayOutputStream copy = new ByteArrayOutputStream();

        long copied = copyTail(file, 4, copy);

        assertThat(copied).isEqualTo(4);
        assertThat(copy.toString(StandardCharsets.UTF_8)).isEqualTo("6789");
    }

    @Test
    void a_file_shorter_than_the_limit_is_copied_whole_even_when_larger_than_one_read() throws IOException {
        byte[] content = new byte[200 << 10];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i % 251);
        }
        Path file = Files.write(dir.resolve("big"), content);
        ByteArrayOutputStream copy = new ByteArrayOutputStream();

        long copied = copyTail(file, 1 << 20, copy);

        assertThat(copied).isEqualTo(content.length);
        assertThat(copy.toByteArray()).isEqualTo(content);
    }

    @Test
    void a_symlink_is_refused_with_the_errno_in_the_error() throws IOException {
        Path target = Files.writeString(dir.resolve("secret"), "host file");
        Path link = Files.createSymbolicLink(dir.resolve("link"), target);

        assertThatThrownBy(() -> copyTail(link, 100, new ByteArrayOutputStream()))
                .isInstanceOf(IOException.class)
                .hasMessage("open(" + link + ") failed: errno 40"); // ELOOP: O_NOFOLLOW
    }

    @Test
    void a_missing_file_is_an_error_naming_it_and_its_errno() {
        Path missing = dir.resolve("missing");

        assertThatThrownBy(() -> copyTail(missing, 100, new ByteArrayOutputStream()))
                .isInstanceOf(IOException.class)
                .hasMessage("open(" + missing + ") failed: errno 2"); // ENOENT
    }

    @Test
    void a_fifo_does_not_block_the_read() throws Exception {
        Path fifo = dir.resolve("fifo");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor())
                .isZero();

        assertThatThrownBy(() -> copyTail(fifo, 100, new ByteArrayOutputStream()))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("lseek(" + fifo + ") failed: errno 29"); // ESPIPE: no writer, nothing waits
    }

    private static long copyTail(Path file, long max, ByteArrayOutputStream sink) throws IOException {
        try (WritableByteChannel out = Channels.newChannel(sink)) {
            return GuestFileReads.copyTail(file, max, out);
        }
    }
}
