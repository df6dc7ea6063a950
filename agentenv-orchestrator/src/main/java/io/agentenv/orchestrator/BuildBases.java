package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.TemplateId;
import java.util.Optional;

/**
 * What a build starts from: a template or snapshot by name, this server's {@code base} for E2B's base image, or an
 * image pulled from its registry ({@link ImageSource}) and made a backend template of its own, prepared at its boot.
 */
final class BuildBases {
    /** E2B's default base image ({@code Template().fromBaseImage()}): this server's {@code base} template. */
    private static final String E2B_BASE_IMAGE = "e2bdev/base";

    private final Orchestrator orchestrator;
    private final ImageSource images;
    private final String defaultUser;
    private final BuildLog log;

    BuildBases(Orchestrator orchestrator, ImageSource images, String defaultUser, BuildLog log) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.images = requireNonNull(images, "images is null");
        this.defaultUser = requireNonNull(defaultUser, "defaultUser is null");
        this.log = requireNonNull(log, "log is null");
    }

    /**
     * What a build starts from: a template (or snapshot) by name, or a pulled image made a template of its own
     * ({@code img-} and its digest's first 16 hex digits; one per image, shared by every build from it).
     */
    record Base(String template, Optional<String> reference, Optional<ImageSource.Image> image) {
        String describe() {
            return reference
                    .map(r -> "image " + r
                            + image.map(i -> " (" + i.digest() + ")").orElse(""))
                    .orElse(template);
        }
    }

    Base resolve(BuildRecord build, TemplateBuilder.BuildSpec spec) throws BuildFailed {
        if (spec.fromTemplate().isPresent()) {
            return new Base(spec.fromTemplate().get(), Optional.empty(), Optional.empty());
        }
        String reference = spec.fromImage().orElseThrow();
        if (isE2bBaseImage(reference)) {
            return new Base(TemplateBuilder.BASE_TEMPLATE, Optional.of(reference), Optional.empty());
        }
        Optional<String> step = Optional.of("base");
        log.info(build, step, "pulling " + reference);
        ImageSource.Image image;
        try {
            image = images.pull(reference, spec.registryCredentials(), line -> log.info(build, step, line));
        } catch (ImageSource.PullException e) {
            throw new BuildFailed(step, "fromImage " + reference + ": " + e.getMessage());
        }
        String hex = image.digest().substring(image.digest().indexOf(':') + 1);
        TemplateId id =
                new TemplateId(TemplateBuilder.IMAGE_TEMPLATE_PREFIX + hex.substring(0, Math.min(16, hex.length())));
        // the image's boot prepares it before its envd starts, so that envd's boot warm-up finds the account
        // commands run as and every build from the image starts prepared
        log.info(
                build,
                step,
                "preparing the image at its boot: the " + defaultUser + " account, /tmp and home directories");
        try {
            orchestrator.addImageTemplate(
                    id,
                    image.rootfs(),
                    provisioning(defaultUser, image.workdir().filter(w -> w.startsWith("/"))));
        } catch (AgentEnvException e) {
            throw new BuildFailed(step, "fromImage " + reference + ": " + e.getMessage());
        }
        return new Base(id.value(), Optional.of(reference), Optional.of(image));
    }

    private static boolean isE2bBaseImage(String image) {
        String repository = image.contains("@") ? image.substring(0, image.indexOf('@')) : image;
        int colon = repository.lastIndexOf(':');
        if (colon > repository.lastIndexOf('/')) {
            repository = repository.substring(0, colon);
        }
        return repository.equals(E2B_BASE_IMAGE) || repository.equals("docker.io/" + E2B_BASE_IMAGE);
    }

    /**
     * What an image's boot runs before its envd starts (see {@link Orchestrator#addImageTemplate}): the directories
     * and accounts every sandbox has (a {@code user} account with a home, as E2B's templates have, and passwordless
     * sudo where sudo is installed). A POSIX shell script (busybox or coreutils) that makes sure of /tmp, /etc/passwd and /etc/group with root, and
     * the account {@code user} with its group and home (the first free id from 1000, bash when there is one), and the
     * image's working directory (made at run time, as container runtimes do).
     */
    static String provisioning(String user, Optional<String> workdir) {
        String name = BuildSteps.quote(user);
        return String.join(
                "\n",
                "set -e",
                "mkdir -p /tmp /root /etc /home"
                        + workdir.map(w -> " " + BuildSteps.quote(w)).orElse(""),
                "chmod 1777 /tmp",
                "touch /etc/passwd /etc/group",
                "grep -q '^root:' /etc/passwd || echo 'root:x:0:0:root:/root:/bin/sh' >> /etc/passwd",
                "grep -q '^root:' /etc/group || echo 'root:x:0:' >> /etc/group",
                "u=" + name,
                "if ! grep -q \"^$u:\" /etc/passwd; then",
                "  id=1000",
                "  while cut -d: -f3 /etc/passwd /etc/group | grep -qx \"$id\"; do id=$((id+1)); done",
                "  grep -q \"^$u:\" /etc/group || echo \"$u:x:$id:\" >> /etc/group",
                "  gid=$(grep \"^$u:\" /etc/group | cut -d: -f3)",
                "  shell=/bin/sh; [ -x /bin/bash ] && shell=/bin/bash",
                "  echo \"$u:x:$id:$gid::/home/$u:$shell\" >> /etc/passwd",
                "  if [ -f /etc/shadow ]; then echo \"$u:!:1::::::\" >> /etc/shadow; fi",
                "  mkdir -p \"/home/$u\"",
                "  chown \"$id:$gid\" \"/home/$u\"",
                "fi",
                "if [ -d /etc/sudoers.d ] && [ ! -e \"/etc/sudoers.d/$u\" ]; then",
                "  echo \"$u ALL=(ALL:ALL) NOPASSWD: ALL\" > \"/etc/sudoers.d/$u\"",
                "  chmod 440 \"/etc/sudoers.d/$u\"",
                "fi");
    }

    /** What the base is, as exactly as it is known: an image's digest, a snapshot's id, a built-in template's build. */
    String identity(Base base) {
        if (base.image().isPresent()) {
            return "image " + base.image().get().digest();
        }
        return orchestrator
                .findTemplate(base.template())
                .map(t -> "template " + t.id().value() + " "
                        + t.updatedAt().map(Object::toString).orElse("-"))
                .orElse("template " + base.template());
    }
}
