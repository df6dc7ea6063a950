package io.agentenv.backend.container.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.ProcessRunner;
import io.agentenv.backend.container.leftovers.LeftoverReaper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link LoopDevices} while devices are attached and detached (needs root for losetup). */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LoopDevicesHostTest {

    private static final int CYCLES = 150;

    @FreshHostFixture
    private HostFixture host;

    @Test
    void the_reapers_detach_of_a_device_that_let_go_of_its_file_meanwhile_is_no_failure() throws Exception {
        Path image = host.sandboxesDir.resolve("left-over").resolve("disk.img");
        Files.createDirectories(image.getParent());
        try (var file = Files.newByteChannel(
                image, java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
            file.truncate(0).position((1 << 20) - 1).write(java.nio.ByteBuffer.wrap(new byte[1]));
        }
        String device = run("losetup", "--find", "--show", image.toString()).strip();
        assertThatThrownBy(() ->
                        autoclearFirst(device).run(Command.of(Duration.ofSeconds(10), "losetup", "--detach", device)))
                .as("a plain losetup fails on it")
                .isInstanceOf(CommandFailedException.class)
                .hasMessageContaining("No such device or address");

        String again = run("losetup", "--find", "--show", image.toString()).strip();
        LeftoverReaper.detach(
                autoclearFirst(again),
                LoopDevices.backedUnder(host.sandboxesDir).getFirst());

        assertThat(LoopDevices.backedUnder(host.sandboxesDir)).isEmpty();
    }

    /**
     * A runner that detaches {@code device} before it runs a command: what the kernel's autoclear does when a leftover
     * disk's last user goes between the reaper's listing of loop devices and its {@code losetup --detach}.
     */
    private ProcessRunner autoclearFirst(String device) {
        return command -> {
            host.runner.run(Command.of(Duration.ofSeconds(10), "losetup", "--detach", device));
            return host.runner.run(command);
        };
    }

    @Test
    void a_device_detached_while_it_is_read_reads_as_detached_never_as_an_error() throws Exception {
        // given an image attached and detached over and over (as sandboxes' disks are by pauses and kills)
        Path image = host.sandboxesDir.resolve("disk.img");
        try (var file = Files.newByteChannel(
                image, java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
            file.truncate(0).position((1 << 20) - 1).write(java.nio.ByteBuffer.wrap(new byte[1]));
        }
        AtomicReference<String> current = new AtomicReference<>();
        AtomicReference<Exception> churnFailed = new AtomicReference<>();
        Thread churn = Thread.ofPlatform().name("loop-churn").start(() -> {
            try {
                for (int i = 0; i < CYCLES; i++) {
                    String device =
                            run("losetup", "--find", "--show", image.toString()).strip();
                    current.set(device.substring("/dev/".length()));
                    run("losetup", "--detach", device);
                }
            } catch (Exception e) {
                churnFailed.set(e);
            } finally {
                current.set("done");
            }
        });

        // when its backing file is read the whole time
        List<Exception> errors = new ArrayList<>();
        int readsOfTheImage = 0;
        for (String device = current.get(); !"done".equals(device); device = current.get()) {
            if (device == null) {
                Thread.onSpinWait();
                continue;
            }
            try {
                // detached, attached to the image, or already to another sandbox's disk (device numbers are reused)
                if (LoopDevices.backingFileOf(device)
                        .filter(image.toString()::equals)
                        .isPresent()) {
                    readsOfTheImage++;
                }
                LoopDevices.backedUnder(host.sandboxesDir);
            } catch (IOException e) {
                errors.add(e);
            }
        }
        churn.join();

        // then no read failed, and reads did meet the image attached
        assertThat(churnFailed.get()).isNull();
        assertThat(errors).isEmpty();
        assertThat(readsOfTheImage).as("reads while attached").isPositive();
        assertThat(LoopDevices.backedUnder(host.sandboxesDir)).isEmpty();
    }

    private static String run(String... argv) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IOException(String.join(" ", argv) + " failed: " + output);
        }
        return output;
    }
}
