package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;

/**
 * E2B volume content schema {@code VolumeEntryStat}: one file, directory or symlink of a volume; {@code type} is
 * {@code file}, {@code directory}, {@code symlink} or {@code unknown}, {@code mode} the permission bits, {@code uid}
 * and {@code gid} as a sandbox sees them, {@code target} a symlink's target.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record VolumeEntryStat(
        String name,
        String path,
        String type,
        long size,
        int mode,
        int uid,
        int gid,
        Instant atime,
        Instant mtime,
        Instant ctime,
        String target) {}
