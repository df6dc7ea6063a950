package io.agentenv.images;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

/**
 * OCI images pulled from registries into one directory, {@code root}, unpacked once per manifest digest.
 *
 * <p>Layout under {@code root}: {@code oci/} is one OCI image layout whose blobs every image shares (skopeo writes
 * them by digest; {@code index.json} names each cached image by its manifest digest's hex); {@code images/<hex>/}
 * holds an image's unpacked {@code rootfs/} and {@code image.json} (its reference, config and size), and appears
 * complete or not at all (it is unpacked in {@code tmp/} and renamed into place); {@code tmp/} holds pulls in
 * progress and short-lived auth files; {@code policy.json} and {@code registries.conf} make skopeo independent of
 * the host's containers configuration.
 *
 * <p>Registry access is skopeo's, layer unpacking umoci's (whiteouts and opaque directories included, paths and
 * symlinks in layers kept inside the rootfs). One process owns a root: concurrent pulls of one image in it do the
 * work once, and a new store removes what an earlier process left in {@code tmp/}.
 */
public final class ImageStore {

    private static final Duration INSPECT_TIMEOUT = Duration.ofMinutes(2);
    private static final Duration PULL_TIMEOUT = Duration.ofHours(1);

    /** Locks per root, so two stores on one root in this process still pull each digest once. */
    private static final ConcurrentHashMap<Path, Locks> LOCKS = new ConcurrentHashMap<>();

    private final Path root;
    private final Path layout;
    private final Path images;
    private final Path tmp;
    private final RegistrySettings settings;
    private final ToolRunner tools;
    private final Locks locks;
    private final boolean rootless;

    /**
     * A store in {@code root} (created if missing).
     *
     * @throws IOException if the directories cannot be created or leftovers of an earlier process removed
     */
    public ImageStore(Path root, RegistrySettings settings) throws IOException {
        this(root, settings, new ProcessToolRunner());
    }

    ImageStore(Path root, RegistrySettings settings, ToolRunner tools) throws IOException {
        this.root = Files.createDirectories(root).toRealPath();
        this.settings = Objects.requireNonNull(settings, "settings");
        this.tools = Objects.requireNonNull(tools, "tools");
        this.layout = this.root.resolve("oci");
        this.images = Files.createDirectories(this.root.resolve("images"));
        this.tmp = this.root.resolve("tmp");
        this.locks = LOCKS.computeIfAbsent(this.root, r -> new Locks());
        this.rootless = !"0".equals(String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid")));
        Files.createDirectories(
                tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwx------"));
        try (DirectoryStream<Path> stale = Files.newDirectoryStream(tmp)) {
            for (Path leftover : stale) {
                deleteTree(leftover);
            }
        }
        OciJson.initLayout(layout);
        OciJson.writeAtomically(
                this.root.resolve("policy.json"),
                "{\"default\":[{\"type\":\"insecureAcceptAnything\"}]}\n".getBytes(StandardCharsets.UTF_8));
        OciJson.writeAtomically(
                this.root.resolve("registries.conf"),
                "# mirrors and insecure registries come from RegistrySettings\n".getBytes(StandardCharsets.UTF_8));
    }

    /** The directory this store keeps everything in. */
    public Path root() {
        return root;
    }

    /**
     * Pulls {@code ref}'s linux/amd64 image unless its manifest digest is cached, and returns it unpacked.
     *
     * <p>A reference by digest that is cached makes no network call; a tag costs one manifest request to learn its
     * current digest. {@code auth}, when given, is used for the registry contacted (a mirror, when the registry is
     * mapped to one); otherwise the settings' default credentials for it, otherwise none.
     *
     * @param log receives human-readable progress lines
     * @throws ImageException of the kind that says what went wrong; a failed pull leaves nothing behind
     */
    public PulledImage pull(ImageRef ref, Optional<RegistryAuth> auth, Consumer<String> log) throws ImageException {
        Objects.requireNonNull(ref, "ref");
        Objects.requireNonNull(auth, "auth");
        Objects.requireNonNull(log, "log");
        if (ref.digest().isPresent()) {
            Optional<PulledImage> cached = cached(ref, ref.digest().get());
            if (cached.isPresent()) {
                log.accept("cached " + ref + " (" + ref.digest().get() + ")");
                return cached.get();
            }
        }
        String host = settings.endpoint(ref.registry());
        ImageRef source = ref.withRegistry(host);
        Optional<RegistryAuth> credentials = auth.or(() -> settings.credentialsFor(host));
        List<String> secrets = credentials
                .map(c -> List.of(c.password(), c.username() + ":" + c.password()))
                .orElse(List.of());
        log.accept("resolving " + ref + (host.equals(ref.registry()) ? "" : " through mirror " + host)
                + credentials.map(c -> " as " + c.username()).orElse(""));
        try (AuthFile authFile = AuthFile.create(tmp, host, credentials)) {
            Skopeo skopeo = new Skopeo(authFile, settings.plainHttpAllowed(host), secrets);
            byte[] raw = skopeo.inspect(transport(source), false, "resolve " + ref);
            String manifestDigest = OciJson.resolveManifest(raw, OciJson.sha256(raw), ref.toString());
            Optional<PulledImage> cached = cached(ref, manifestDigest);
            if (cached.isPresent()) {
                log.accept("cached " + ref + " (" + manifestDigest + ")");
                return cached.get();
            }
            ReentrantLock digestLock = locks.digest(manifestDigest);
            digestLock.lockInterruptibly();
            try {
                cached = cached(ref, manifestDigest);
                if (cached.isPresent()) {
                    log.accept("cached " + ref + " (" + manifestDigest + "), pulled meanwhile");
                    return cached.get();
                }
                return fetch(ref, source.withDigest(manifestDigest), manifestDigest, skopeo, log);
            } finally {
                digestLock.unlock();
            }
        } catch (IOException e) {
            throw new ImageException.Failed("pull " + ref + ": " + ToolErrors.redact(e.toString(), secrets), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ImageException.Failed("pull " + ref + ": interrupted", e);
        }
    }

    /** Copies the image into the layout, unpacks it in {@code tmp/} and renames it into place. */
    private PulledImage fetch(ImageRef ref, ImageRef pinned, String manifestDigest, Skopeo skopeo, Consumer<String> log)
            throws ImageException, IOException, InterruptedException {
        String hex = hex(manifestDigest);
        log.accept("pulling " + ref + " (" + manifestDigest + ", " + OciJson.OS + "/" + OciJson.ARCHITECTURE + ")");
        byte[] rawConfig = skopeo.inspect(transport(pinned), true, "read the image config of " + ref);
        ImageConfig config = OciJson.imageConfig(rawConfig, ref.toString());
        Path staging = Files.createDirectory(tmp.resolve("pull-" + hex.substring(0, 12) + "-" + UUID.randomUUID()));
        boolean registered = false;
        boolean done = false;
        locks.blobs.readLock().lockInterruptibly();
        try {
            Path stagingLayout = staging.resolve("layout");
            skopeo.copy(transport(pinned), stagingLayout, log, "copy " + ref);
            ObjectNode descriptor = OciJson.onlyManifest(stagingLayout);
            locks.index.lock();
            try {
                OciJson.putRef(layout, hex, descriptor);
                registered = true;
            } finally {
                locks.index.unlock();
            }
            Path image = Files.createDirectory(staging.resolve("image"));
            Path rootfs = image.resolve("rootfs");
            log.accept("unpacking " + ref);
            List<String> unpack = new ArrayList<>(List.of("umoci", "raw", "unpack"));
            if (rootless) {
                unpack.add("--rootless");
            }
            unpack.addAll(List.of("--image", layout + ":" + hex, rootfs.toString()));
            ToolRunner.Result result = tools.run(unpack, env(), PULL_TIMEOUT, null);
            if (!result.ok()) {
                throw new ImageException.Failed("unpack " + ref + ": " + failure("umoci", result, List.of()));
            }
            long size = apparentSize(rootfs);
            Metadata metadata = new Metadata(
                    ref.toString(),
                    manifestDigest,
                    config.env(),
                    config.workingDir().orElse(""),
                    config.user().orElse(""),
                    config.entrypoint(),
                    config.cmd(),
                    size);
            Files.write(image.resolve("image.json"), OciJson.MAPPER.writeValueAsBytes(metadata));
            Path target = images.resolve(hex);
            Files.move(image, target, StandardCopyOption.ATOMIC_MOVE);
            done = true;
            log.accept("pulled " + ref + " (" + manifestDigest + "): " + humanSize(size) + " unpacked");
            return new PulledImage(ref, manifestDigest, config, target.resolve("rootfs"), size);
        } finally {
            try {
                if (!done && registered) {
                    locks.index.lock();
                    try {
                        OciJson.putRef(layout, hex, null);
                    } finally {
                        locks.index.unlock();
                    }
                }
                deleteTree(staging);
            } finally {
                locks.blobs.readLock().unlock();
            }
            if (!done) {
                collectGarbageIfIdle();
            }
        }
    }

    /**
     * The cached images, with the reference each was first pulled as.
     *
     * @throws ImageException.Failed if the store cannot be read
     */
    public List<PulledImage> list() throws ImageException {
        List<PulledImage> out = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(images)) {
            for (Path dir : dirs) {
                String name = dir.getFileName().toString();
                if (name.matches("[0-9a-f]{64}")) {
                    read(dir, Optional.empty()).ifPresent(out::add);
                }
            }
        } catch (IOException e) {
            throw new ImageException.Failed("list " + images + ": " + e, e);
        }
        out.sort(Comparator.comparing(p -> p.ref().toString()));
        return out;
    }

    /**
     * Removes the image with manifest digest {@code manifestDigest} ({@code sha256:...}): its rootfs, its name in the
     * layout, and the blobs no other image uses. Callers make sure no sandbox still uses its rootfs.
     *
     * @return whether it was cached
     * @throws IllegalArgumentException if {@code manifestDigest} is not a sha256 digest
     * @throws ImageException.Failed if removing failed (what is left is removed by the next removal)
     */
    public boolean remove(String manifestDigest) throws ImageException {
        String hex = hex(manifestDigest);
        ReentrantLock digestLock = locks.digest(manifestDigest);
        try {
            digestLock.lockInterruptibly();
            try {
                locks.blobs.writeLock().lockInterruptibly();
                try {
                    boolean named;
                    locks.index.lock();
                    try {
                        named = OciJson.putRef(layout, hex, null);
                    } finally {
                        locks.index.unlock();
                    }
                    Path dir = images.resolve(hex);
                    boolean unpacked = Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS);
                    if (unpacked) {
                        Path doomed = tmp.resolve("remove-" + hex.substring(0, 12) + "-" + UUID.randomUUID());
                        Files.move(dir, doomed, StandardCopyOption.ATOMIC_MOVE);
                        deleteTree(doomed);
                    }
                    collectGarbage();
                    return named || unpacked;
                } finally {
                    locks.blobs.writeLock().unlock();
                }
            } finally {
                digestLock.unlock();
            }
        } catch (IOException e) {
            throw new ImageException.Failed("remove " + manifestDigest + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ImageException.Failed("remove " + manifestDigest + ": interrupted", e);
        }
    }

    /** Removes blobs no image in the layout references, if no pull is copying blobs right now. */
    private void collectGarbageIfIdle() {
        if (locks.blobs.writeLock().tryLock()) {
            try {
                collectGarbage();
            } catch (IOException | ImageException | InterruptedException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                // the next removal collects them
            } finally {
                locks.blobs.writeLock().unlock();
            }
        }
    }

    /** umoci gc: deletes the layout's unreferenced blobs. Needs the blobs write lock. */
    private void collectGarbage() throws IOException, InterruptedException, ImageException {
        ToolRunner.Result result =
                tools.run(List.of("umoci", "gc", "--layout", layout.toString()), env(), INSPECT_TIMEOUT, null);
        if (!result.ok()) {
            throw new ImageException.Failed("garbage-collect " + layout + ": " + failure("umoci", result, List.of()));
        }
    }

    private Optional<PulledImage> cached(ImageRef ref, String manifestDigest) throws ImageException {
        if (!manifestDigest.startsWith("sha256:")) {
            return Optional.empty();
        }
        try {
            return read(images.resolve(hex(manifestDigest)), Optional.of(ref));
        } catch (IOException e) {
            throw new ImageException.Failed("read the cached " + manifestDigest + ": " + e, e);
        }
    }

    private static Optional<PulledImage> read(Path dir, Optional<ImageRef> as) throws IOException {
        Path file = dir.resolve("image.json");
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        Metadata m = OciJson.MAPPER.readValue(file.toFile(), Metadata.class);
        ImageConfig config =
                new ImageConfig(m.env(), nonEmpty(m.workingDir()), nonEmpty(m.user()), m.entrypoint(), m.cmd());
        ImageRef ref = as.orElseGet(() -> ImageRef.parse(m.ref()));
        return Optional.of(new PulledImage(ref, m.manifestDigest(), config, dir.resolve("rootfs"), m.sizeBytes()));
    }

    private static Optional<String> nonEmpty(String s) {
        return s == null || s.isEmpty() ? Optional.empty() : Optional.of(s);
    }

    /** What {@code images/<hex>/image.json} holds. */
    record Metadata(
            String ref,
            String manifestDigest,
            List<String> env,
            String workingDir,
            String user,
            List<String> entrypoint,
            List<String> cmd,
            long sizeBytes) {
        Metadata {
            env = env == null ? List.of() : List.copyOf(env);
            entrypoint = entrypoint == null ? List.of() : List.copyOf(entrypoint);
            cmd = cmd == null ? List.of() : List.copyOf(cmd);
        }
    }

    private static String hex(String digest) {
        if (!digest.matches("sha256:[0-9a-f]{64}")) {
            throw new IllegalArgumentException("not a sha256 digest: " + digest);
        }
        return digest.substring("sha256:".length());
    }

    /** skopeo's name of a reference: {@code docker://host/repo@digest}, or {@code :tag} without a digest. */
    private static String transport(ImageRef ref) {
        return "docker://" + ref.name()
                + ref.digest().map(d -> "@" + d).orElseGet(() -> ":" + ref.tag().orElseThrow());
    }

    private Map<String, String> env() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("CONTAINERS_REGISTRIES_CONF", root.resolve("registries.conf").toString());
        env.put("TMPDIR", tmp.toString());
        return env;
    }

    private static String failure(String tool, ToolRunner.Result result, List<String> secrets) {
        String message = ToolErrors.clean(result.stderr(), secrets);
        if (result.timedOut()) {
            return tool + " timed out" + (message.isEmpty() ? "" : ": " + message);
        }
        return message.isEmpty() ? tool + " exited with " + result.exitCode() : message;
    }

    /** skopeo with this pull's credentials and transport security. */
    private final class Skopeo {
        private final AuthFile authFile;
        private final boolean plainHttp;
        private final List<String> secrets;

        Skopeo(AuthFile authFile, boolean plainHttp, List<String> secrets) {
            this.authFile = authFile;
            this.plainHttp = plainHttp;
            this.secrets = secrets;
        }

        private List<String> global() {
            return new ArrayList<>(List.of(
                    "skopeo",
                    "--policy",
                    root.resolve("policy.json").toString(),
                    "--tmpdir",
                    tmp.toString(),
                    "--override-os",
                    OciJson.OS,
                    "--override-arch",
                    OciJson.ARCHITECTURE));
        }

        byte[] inspect(String source, boolean config, String what)
                throws ImageException, IOException, InterruptedException {
            List<String> argv = global();
            argv.addAll(List.of("inspect", "--raw"));
            if (config) {
                argv.add("--config");
            }
            argv.add("--tls-verify=" + !plainHttp);
            argv.addAll(authFile.path()
                    .map(p -> List.of("--authfile", p.toString()))
                    .orElse(List.of("--no-creds")));
            argv.add(source);
            ToolRunner.Result result = tools.run(argv, env(), INSPECT_TIMEOUT, null);
            if (!result.ok()) {
                throw ToolErrors.classify(what, failure("skopeo", result, secrets));
            }
            return result.stdout();
        }

        void copy(String source, Path destination, Consumer<String> log, String what)
                throws ImageException, IOException, InterruptedException {
            List<String> argv = global();
            argv.addAll(List.of("copy", "--remove-signatures", "--src-tls-verify=" + !plainHttp));
            argv.addAll(authFile.path()
                    .map(p -> List.of("--src-authfile", p.toString()))
                    .orElse(List.of("--src-no-creds")));
            // umoci 0.4.7 unpacks gzip and plain tar layers only: zstd layers are recompressed with gzip on copy
            argv.addAll(List.of("--dest-compress-format", "gzip"));
            argv.addAll(
                    List.of("--dest-shared-blob-dir", layout.resolve("blobs").toString()));
            argv.add(source);
            argv.add("oci:" + destination + ":image");
            ToolRunner.Result result =
                    tools.run(argv, env(), PULL_TIMEOUT, line -> log.accept(ToolErrors.redact(line, secrets)));
            if (!result.ok()) {
                throw ToolErrors.classify(what, failure("skopeo", result, secrets));
            }
        }
    }

    /** A mode-0600 auth file in skopeo's format for one registry, deleted on close; empty without credentials. */
    private record AuthFile(Optional<Path> path) implements AutoCloseable {
        static AuthFile create(Path dir, String host, Optional<RegistryAuth> auth) throws IOException {
            if (auth.isEmpty()) {
                return new AuthFile(Optional.empty());
            }
            Path file = Files.createFile(
                    dir.resolve("auth-" + UUID.randomUUID() + ".json"),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            String token = Base64.getEncoder()
                    .encodeToString(
                            (auth.get().username() + ":" + auth.get().password()).getBytes(StandardCharsets.UTF_8));
            ObjectNode json = OciJson.MAPPER.createObjectNode();
            json.putObject("auths").putObject(host.toLowerCase(Locale.ROOT)).put("auth", token);
            try {
                Files.write(file, OciJson.MAPPER.writeValueAsBytes(json));
            } catch (IOException e) {
                Files.deleteIfExists(file);
                throw e;
            }
            return new AuthFile(Optional.of(file));
        }

        @Override
        public void close() throws IOException {
            if (path.isPresent()) {
                Files.deleteIfExists(path.get());
            }
        }
    }

    /** The locks of one root: per manifest digest, blobs (pulls share, removal excludes), the layout's index. */
    private static final class Locks {
        final ReentrantReadWriteLock blobs = new ReentrantReadWriteLock();
        final ReentrantLock index = new ReentrantLock();
        private final ConcurrentHashMap<String, ReentrantLock> digests = new ConcurrentHashMap<>();

        ReentrantLock digest(String manifestDigest) {
            return digests.computeIfAbsent(manifestDigest, d -> new ReentrantLock());
        }
    }

    /** The apparent size of the regular files under {@code dir}; symbolic links are not followed. */
    private static long apparentSize(Path dir) throws IOException {
        long[] total = {0};
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (attrs.isRegularFile()) {
                    total[0] += attrs.size();
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return total[0];
    }

    /**
     * Deletes a tree without following symbolic links (an image's links point anywhere; they are removed, not
     * entered). Directories without write permission, as unpacked images have, get it first.
     */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                if (!Files.isWritable(d) || !Files.isExecutable(d)) {
                    Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwx------"));
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private static String humanSize(long bytes) {
        if (bytes < 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
        }
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
    }
}
