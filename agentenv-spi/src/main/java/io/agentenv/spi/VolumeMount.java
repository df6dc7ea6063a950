package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;

/**
 * A volume as one sandbox mounts it: the volume's content directory on the host (one directory per volume, shared by
 * every sandbox that mounts it, so their writes meet) appearing at {@code guestPath} inside. The volume's content is
 * never part of a sandbox's checkpoint, snapshot or disk: a sandbox restored from one mounts the volume again.
 *
 * @param volume    the volume's id (logs and errors name it)
 * @param hostDir   the host directory of the volume's content (absolute)
 * @param guestPath where it appears inside: absolute, normalized ({@code /data}, not {@code /data/} or
 *                  {@code /a/../data}), not {@code /}
 * @param readOnly  whether the sandbox may only read it
 */
public record VolumeMount(String volume, Path hostDir, String guestPath, boolean readOnly) {

    public VolumeMount {
        requireNonNull(volume, "volume is null");
        requireNonNull(hostDir, "hostDir is null");
        requireNonNull(guestPath, "guestPath is null");
        if (!hostDir.isAbsolute()) {
            throw new IllegalArgumentException("hostDir must be absolute: " + hostDir);
        }
        if (!isNormalizedAbsolute(guestPath)) {
            throw new IllegalArgumentException(
                    "a volume's mount path must be absolute and normalized, and not /: " + guestPath);
        }
    }

    /** Whether {@code path} is absolute, not {@code /}, with no empty, {@code .} or {@code ..} segment. */
    public static boolean isNormalizedAbsolute(String path) {
        if (path.length() < 2 || path.charAt(0) != '/' || path.endsWith("/") || path.indexOf('\0') >= 0) {
            return false;
        }
        for (String segment : path.substring(1).split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                return false;
            }
        }
        return true;
    }

    /** Whether this mount's path is {@code other} or lies below it, or the other way round. */
    public boolean overlaps(String other) {
        return guestPath.equals(other) || guestPath.startsWith(other + "/") || other.startsWith(guestPath + "/");
    }
}
