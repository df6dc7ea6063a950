package io.agentenv.images;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What an image's config says about the process to run: the {@code config} object of the OCI image config (Docker's
 * {@code Env}, {@code WorkingDir}, {@code User}, {@code Entrypoint}, {@code Cmd}). Absent or empty values are empty.
 *
 * @param env {@code NAME=value} entries in the image's order
 * @param workingDir the working directory, if set
 * @param user the user ({@code name}, {@code uid}, {@code uid:gid}, ...), if set
 * @param entrypoint the entrypoint's argv
 * @param cmd the command's argv (the entrypoint's arguments when there is one)
 */
public record ImageConfig(
        List<String> env,
        Optional<String> workingDir,
        Optional<String> user,
        List<String> entrypoint,
        List<String> cmd) {

    public ImageConfig {
        env = List.copyOf(env);
        Objects.requireNonNull(workingDir, "workingDir");
        Objects.requireNonNull(user, "user");
        entrypoint = List.copyOf(entrypoint);
        cmd = List.copyOf(cmd);
    }
}
