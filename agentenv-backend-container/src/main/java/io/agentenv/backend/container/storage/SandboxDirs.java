package io.agentenv.backend.container.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.ContainerId;
import java.nio.file.Path;

/**
 * The host directories of one sandbox, all below {@code dir}: its disk image {@code disk.img} mounted at {@code disk}
 * (see {@link SandboxDisks}), which holds the overlay's {@code upper} and {@code work} dirs and the {@code envd} dir
 * bound into the container for envd's unix socket (on the disk, so what the sandbox writes there counts against its
 * disk), the overlay's merged {@code rootfs} mount point, the {@code proc}
 * dir of files shown over the sandbox's {@code /proc} ({@code GuestProcFiles}), and the
 * runc {@code bundle} (config.json, runc.log, init.pid). Everything a sandbox leaves on disk is under {@code dir}, so
 * removing it (after unmounting {@code rootfs}, then {@code disk}) removes the sandbox's files.
 */
public record SandboxDirs(Path dir) {

    public SandboxDirs {
        requireNonNull(dir, "dir is null");
        if (!dir.isAbsolute()) {
            throw new IllegalArgumentException("sandbox dir must be absolute: " + dir);
        }
    }

    /** The directory of sandbox {@code id} under {@code sandboxesDir}. */
    public static SandboxDirs of(Path sandboxesDir, ContainerId id) {
        return new SandboxDirs(sandboxesDir.resolve(id.value()));
    }

    /** The sandbox's disk image file (sparse ext4). */
    public Path diskImage() {
        return dir.resolve("disk.img");
    }

    /** Where the disk image is mounted; upper and work are on it (overlayfs needs both on one filesystem). */
    public Path disk() {
        return dir.resolve("disk");
    }

    public Path upper() {
        return disk().resolve("upper");
    }

    public Path work() {
        return disk().resolve("work");
    }

    public Path rootfs() {
        return dir.resolve("rootfs");
    }

    /** The dir bound writable at the sandbox's {@code /run/envd}: on its disk, beside (not in) the upper dir. */
    public Path envd() {
        return disk().resolve("envd");
    }

    /** The files shown over the sandbox's {@code /proc} paths (its boot id), bound read-only: {@code GuestProcFiles}. */
    public Path procFiles() {
        return dir.resolve("proc");
    }

    public Path bundle() {
        return dir.resolve("bundle");
    }

    /** The sandbox's owned layers (a restored snapshot's or a resumed pause's), below its upper in the overlay. */
    public Path layers() {
        return dir.resolve("layers");
    }

    /** CRIU's work dir for one restore (its restore.log lands there). */
    public Path restoreWork() {
        return dir.resolve("restore-work");
    }
}
