package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Where template builds get OCI images from ({@code fromImage}): pulls an image from its registry and unpacks it once
 * per digest. The server adapts its image store to this.
 */
public interface ImageSource {

    /**
     * A pulled image, unpacked.
     *
     * @param digest the manifest digest ({@code sha256:...}), which names its template
     * @param rootfs its root filesystem, kept for as long as templates of it exist
     * @param env the image config's {@code NAME=value} entries
     * @param workdir the image config's working directory, if any
     * @param user the image config's user, if any
     */
    record Image(String digest, Path rootfs, List<String> env, Optional<String> workdir, Optional<String> user) {
        public Image {
            requireNonNull(digest, "digest is null");
            requireNonNull(rootfs, "rootfs is null");
            env = List.copyOf(env);
            requireNonNull(workdir, "workdir is null");
            requireNonNull(user, "user is null");
        }
    }

    /** Registry credentials sent along with a pull ({@code fromImage}'s {@code username} and {@code password}). */
    record Credentials(String username, String password) {
        public Credentials {
            requireNonNull(username, "username is null");
            requireNonNull(password, "password is null");
        }

        @Override
        public String toString() {
            return "Credentials[" + username + ", ****]";
        }
    }

    /** Why an image could not be had, in words for the build's status (never with a password in it). */
    final class PullException extends Exception {
        private static final long serialVersionUID = 1L;

        public PullException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Pulls {@code reference} ({@code ubuntu:22.04}, {@code registry:5000/team/app@sha256:...}), unless its digest is
     * had already, and returns it unpacked.
     *
     * @param log receives progress lines for the build's log
     */
    Image pull(String reference, Optional<Credentials> credentials, Consumer<String> log) throws PullException;

    /** A source for servers that pull no images: every pull fails with that reason. */
    static ImageSource none() {
        return (reference, credentials, log) -> {
            throw new PullException("this server pulls no images from registries", null);
        };
    }
}
