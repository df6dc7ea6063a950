package io.agentenv.images;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A fully qualified image reference: registry, repository, and a tag, a digest or both, normalised as Docker does
 * ({@code ubuntu} is {@code docker.io/library/ubuntu:latest}; {@code localhost:5000/x} names the registry
 * {@code localhost:5000}; {@code name@sha256:...} pins a digest).
 *
 * @param registry the registry's host, with its port if one was given ({@code docker.io}, {@code 127.0.0.1:5000})
 * @param repository the path inside the registry ({@code library/ubuntu})
 * @param tag the tag, if one was given or implied ({@code latest} when there is neither tag nor digest)
 * @param digest the digest ({@code sha256:<64 hex>}), if one was given; it wins over the tag
 */
public record ImageRef(String registry, String repository, Optional<String> tag, Optional<String> digest) {

    /** Docker Hub's canonical name; {@code index.docker.io} and names without a registry mean it. */
    public static final String DOCKER_HUB = "docker.io";

    private static final String DEFAULT_TAG = "latest";
    private static final int MAX_NAME = 255;

    private static final Pattern COMPONENT = Pattern.compile("[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*");
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
    private static final Pattern DIGEST = Pattern.compile("sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128}");
    private static final Pattern HOST = Pattern.compile(
            "(?:(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])(?:\\.(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*"
                    + "[A-Za-z0-9]))*|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?");

    public ImageRef {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(repository, "repository");
        Objects.requireNonNull(tag, "tag");
        Objects.requireNonNull(digest, "digest");
        if (!HOST.matcher(registry).matches()) {
            throw new IllegalArgumentException("invalid registry host: " + registry);
        }
        checkRepository(repository, registry + "/" + repository);
        tag.ifPresent(t -> {
            if (!TAG.matcher(t).matches()) {
                throw new IllegalArgumentException("invalid tag: " + t);
            }
        });
        digest.ifPresent(d -> {
            if (!DIGEST.matcher(d).matches()) {
                throw new IllegalArgumentException("invalid digest (sha256:<64 hex> expected): " + d);
            }
        });
        if (tag.isEmpty() && digest.isEmpty()) {
            throw new IllegalArgumentException("an image reference needs a tag or a digest");
        }
    }

    /**
     * Parses a reference as {@code docker pull} reads one.
     *
     * @throws IllegalArgumentException naming what is wrong with it
     */
    public static ImageRef parse(String reference) {
        Objects.requireNonNull(reference, "reference");
        String text = reference;
        if (text.isEmpty()) {
            throw new IllegalArgumentException("empty image reference");
        }
        if (!text.equals(text.strip()) || text.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("image reference contains whitespace: '" + reference + "'");
        }
        Optional<String> digest = Optional.empty();
        int at = text.indexOf('@');
        if (at >= 0) {
            String d = text.substring(at + 1);
            if (!DIGEST.matcher(d).matches()) {
                throw new IllegalArgumentException(
                        "invalid digest in '" + reference + "' (sha256:<64 lowercase hex> expected)");
            }
            digest = Optional.of(d);
            text = text.substring(0, at);
        }
        Optional<String> tag = Optional.empty();
        int colon = text.lastIndexOf(':');
        if (colon > text.lastIndexOf('/')) {
            String t = text.substring(colon + 1);
            if (!TAG.matcher(t).matches()) {
                throw new IllegalArgumentException("invalid tag '" + t + "' in '" + reference + "'");
            }
            tag = Optional.of(t);
            text = text.substring(0, colon);
        }
        if (text.isEmpty()) {
            throw new IllegalArgumentException("no repository name in '" + reference + "'");
        }
        String registry = DOCKER_HUB;
        String path = text;
        int slash = text.indexOf('/');
        if (slash > 0) {
            String first = text.substring(0, slash);
            if (first.contains(".")
                    || first.contains(":")
                    || first.equals("localhost")
                    || first.startsWith("[")
                    || !first.equals(first.toLowerCase(java.util.Locale.ROOT))) {
                registry = first;
                path = text.substring(slash + 1);
            }
        }
        if (!HOST.matcher(registry).matches()) {
            throw new IllegalArgumentException("invalid registry host '" + registry + "' in '" + reference + "'");
        }
        if (registry.equals("index.docker.io")) {
            registry = DOCKER_HUB;
        }
        if (registry.equals(DOCKER_HUB) && path.indexOf('/') < 0) {
            path = "library/" + path;
        }
        checkRepository(path, reference);
        if (tag.isEmpty() && digest.isEmpty()) {
            tag = Optional.of(DEFAULT_TAG);
        }
        return new ImageRef(registry, path, tag, digest);
    }

    private static void checkRepository(String repository, String reference) {
        if (repository.isEmpty()) {
            throw new IllegalArgumentException("no repository name in '" + reference + "'");
        }
        if ((repository.length() + 1) > MAX_NAME) {
            throw new IllegalArgumentException("repository name longer than " + MAX_NAME + " characters");
        }
        for (String component : repository.split("/", -1)) {
            if (!COMPONENT.matcher(component).matches()) {
                String why = component.equals(component.toLowerCase(java.util.Locale.ROOT))
                        ? "invalid repository name"
                        : "repository name must be lowercase";
                throw new IllegalArgumentException(why + " in '" + reference + "': '" + repository + "'");
            }
        }
    }

    /** The same repository at another registry (a mirror's host), tag and digest kept. */
    public ImageRef withRegistry(String host) {
        return new ImageRef(host, repository, tag, digest);
    }

    /** The same repository pinned to {@code manifestDigest}, without a tag. */
    public ImageRef withDigest(String manifestDigest) {
        return new ImageRef(registry, repository, Optional.empty(), Optional.of(manifestDigest));
    }

    /** {@code registry/repository} without tag or digest. */
    public String name() {
        return registry + "/" + repository;
    }

    /** The canonical form: {@code registry/repository[:tag][@digest]}. */
    @Override
    public String toString() {
        return name()
                + tag.map(t -> ":" + t).orElse("")
                + digest.map(d -> "@" + d).orElse("");
    }
}
