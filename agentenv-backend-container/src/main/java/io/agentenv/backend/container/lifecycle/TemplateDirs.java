package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Where the backend's templates are: the host's ({@code <cache dir>/templates}, built by the host setup and shared by
 * every server on the host) and the images this backend linked ({@code <work dir>/image-templates}: an image lives in
 * the server's image store, so its template lives and goes with the server's data). Each template is a directory with
 * a {@code current} link to the build in use, whose {@code rootfs} is the template's root filesystem.
 */
public final class TemplateDirs {
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
    /** An image build's preparation script, beside its {@code rootfs} link. */
    static final String PREPARATION = "prepare.sh";

    private final Path hostDir;
    private final Path imageDir;

    public TemplateDirs(Path hostDir, Path imageDir) {
        this.hostDir = requireNonNull(hostDir, "hostDir is null");
        this.imageDir = requireNonNull(imageDir, "imageDir is null");
    }

    /** Whether {@code name} can name a template (lowercase letters, digits, '_' and '-'; 1-63). */
    public static boolean isValidName(String name) {
        return NAME.matcher(name).matches();
    }

    /** Where a template is. */
    public enum Kind {
        /** One of the host's (built by the setup). */
        HOST,
        /** An image this backend linked. */
        IMAGE,
        /** No such template. */
        NONE
    }

    /** Which kind of template {@code template} is: one stat for the host's, two for an image or none. */
    public Kind kind(String template) {
        if (!isValidName(template)) {
            return Kind.NONE;
        }
        if (Files.isDirectory(hostDir.resolve(template).resolve("current"))) {
            return Kind.HOST;
        }
        return Files.isDirectory(imageDir.resolve(template).resolve("current")) ? Kind.IMAGE : Kind.NONE;
    }

    /** Whether the template exists: its {@code current} build is linked. */
    public boolean exists(String template) {
        return kind(template) != Kind.NONE;
    }

    /** Whether the template is an image this backend linked. */
    public boolean isImage(String template) {
        return kind(template) == Kind.IMAGE;
    }

    /** The template's {@code current} link (the host's, else an image's). */
    public Path current(String template) {
        requireValid(template);
        return (kind(template) == Kind.IMAGE ? imageDir : hostDir)
                .resolve(template)
                .resolve("current");
    }

    /** The root filesystem of the template's current build, resolved through its links. */
    public Path rootfs(String template) throws IOException {
        Path current = current(template);
        if (!Files.exists(current)) {
            throw new IOException("template '" + template + "' has not been built (no " + current + ")");
        }
        return current.toRealPath().resolve("rootfs").toRealPath();
    }

    /** Every template's name, sorted. */
    public List<String> names() throws IOException {
        TreeSet<String> names = new TreeSet<>();
        for (Path dir : List.of(hostDir, imageDir)) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> entries = Files.list(dir)) {
                entries.map(p -> p.getFileName().toString())
                        .filter(n -> isValidName(n)
                                && Files.isDirectory(dir.resolve(n).resolve("current")))
                        .forEach(names::add);
            }
        }
        return List.copyOf(names);
    }

    /**
     * Links {@code rootfs} as the image template {@code template}: {@code <template>/<build>/rootfs} points at it,
     * {@code <template>/<build>/}{@value #PREPARATION} holds the script its boot runs first (none when empty), and the
     * template's {@code current} link is switched to that build in one rename. Linking the build it has already is a
     * no-op ({@code build} names the rootfs and the preparation). A name the host's templates use is refused.
     *
     * @return whether the link changed
     */
    public boolean linkImage(String template, Path rootfs, String preparation, String build) throws IOException {
        requireValid(template);
        requireValid(build);
        if (Files.isDirectory(hostDir.resolve(template).resolve("current"))) {
            throw new IOException("template " + template + " is one of the host's");
        }
        Path image = rootfs.toRealPath();
        if (!Files.isDirectory(image)) {
            throw new IOException("not a directory: " + rootfs);
        }
        Path dir = imageDir.resolve(template);
        if (isImage(template)
                && dir.resolve("current").toRealPath().getFileName().toString().equals(build)
                && rootfs(template).equals(image)) {
            return false;
        }
        Files.createDirectories(dir);
        Path buildDir = Files.createDirectories(dir.resolve(build));
        Path link = buildDir.resolve("rootfs");
        Files.deleteIfExists(link);
        Files.createSymbolicLink(link, image);
        Files.deleteIfExists(buildDir.resolve(PREPARATION));
        if (!preparation.isEmpty()) {
            Files.writeString(buildDir.resolve(PREPARATION), preparation);
        }
        Path next = dir.resolve(".current-" + build);
        Files.deleteIfExists(next);
        Files.createSymbolicLink(next, buildDir.getFileName());
        Files.move(next, dir.resolve("current"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return true;
    }

    /** The script an image template's boot runs before its envd (see {@link #linkImage}); empty for none. */
    public String preparation(String template) throws IOException {
        if (kind(template) != Kind.IMAGE) {
            return "";
        }
        Path script = current(template).resolve(PREPARATION);
        return Files.isRegularFile(script) ? Files.readString(script) : "";
    }

    private static void requireValid(String template) {
        if (!isValidName(template)) {
            throw new IllegalArgumentException("bad template name: " + template);
        }
    }
}
