package io.agentenv.backend.container.host;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What scripts/setup-host.sh prepared on this host, read from the {@code host.env} it writes last: where runc and the
 * CRIU build are, the template cache, the sandbox address range, the name prefix every netns, veth and overlay of
 * this backend carries, and the cgroup v1 parent. Built once at start-up and passed down.
 */
public record HostLayout(
        Path cacheDir,
        Path runc,
        Path criu,
        Path criuRuncConfig,
        Path templatesDir,
        Path resolvConf,
        SlotAddressing addressing,
        String namePrefix,
        String cgroupParent,
        Path cgroupRoot,
        boolean swapAccounting,
        Path runDir) {

    /**
     * Where {@code ip netns} pins network namespaces by name: the sandboxes' runtime hook pins theirs there
     * ({@code ip netns attach}), and the netns pool finds and removes them there.
     */
    public static final Path NETNS_DIR = Path.of("/run/netns");

    /** Where the setup writes its facts, under the default cache dir. */
    public static final Path DEFAULT_HOST_ENV = Path.of("/var/cache/agentenv/host.env");
    /** Holds the boot id of the boot the setup last ran in; firewall rules, forwarding and the CRIU cache live until reboot. */
    static final Path READY_MARKER = Path.of("/run/agentenv/host-ready");

    private static final Pattern NAME_PREFIX = Pattern.compile("[a-z][a-z0-9]{0,5}");

    public HostLayout {
        requireNonNull(cacheDir, "cacheDir is null");
        requireNonNull(runc, "runc is null");
        requireNonNull(criu, "criu is null");
        requireNonNull(criuRuncConfig, "criuRuncConfig is null");
        requireNonNull(templatesDir, "templatesDir is null");
        requireNonNull(resolvConf, "resolvConf is null");
        requireNonNull(addressing, "addressing is null");
        requireNonNull(namePrefix, "namePrefix is null");
        requireNonNull(cgroupParent, "cgroupParent is null");
        requireNonNull(cgroupRoot, "cgroupRoot is null");
        requireNonNull(runDir, "runDir is null");
        if (!NAME_PREFIX.matcher(namePrefix).matches()) {
            throw new IllegalArgumentException(
                    "namePrefix must be 1-6 lowercase letters or digits, starting with a letter: " + namePrefix);
        }
        if (!cgroupParent.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("cgroupParent must be a single path segment: " + cgroupParent);
        }
    }

    /** Why this host cannot run container sandboxes right now, or empty when it can. */
    public static Optional<String> unreadyReason(Path hostEnv) {
        try {
            if (!Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"))) {
                return Optional.of("not running as root (container sandboxes need root)");
            }
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.of("cannot tell whether this process is root: " + e.getMessage());
        }
        if (!Files.isRegularFile(hostEnv)) {
            return Optional.of("scripts/setup-host.sh has not been run (no " + hostEnv + ")");
        }
        try {
            String boot =
                    Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip();
            if (!Files.isRegularFile(READY_MARKER)
                    || !Files.readString(READY_MARKER).strip().equals(boot)) {
                return Optional.of("scripts/setup-host.sh has not been run since this boot (" + READY_MARKER + ")");
            }
        } catch (IOException e) {
            return Optional.of("cannot read the boot id or " + READY_MARKER + ": " + e.getMessage());
        }
        return Optional.empty();
    }

    /** Reads {@code host.env}. */
    public static HostLayout load(Path hostEnv) throws IOException {
        Map<String, String> env = new HashMap<>();
        for (String line : Files.readAllLines(hostEnv)) {
            String trimmed = line.strip();
            int eq = trimmed.indexOf('=');
            if (trimmed.isEmpty() || trimmed.startsWith("#") || eq < 1) {
                continue;
            }
            env.put(trimmed.substring(0, eq), trimmed.substring(eq + 1));
        }
        return new HostLayout(
                path(env, "AENV_CACHE_DIR", hostEnv),
                path(env, "AENV_RUNC", hostEnv),
                path(env, "AENV_CRIU", hostEnv),
                path(env, "AENV_CRIU_RUNC_CONF", hostEnv),
                path(env, "AENV_TEMPLATES_DIR", hostEnv),
                path(env, "AENV_RESOLV_CONF", hostEnv),
                SlotAddressing.parse(value(env, "AENV_SANDBOX_CIDR", hostEnv)),
                value(env, "AENV_NAME_PREFIX", hostEnv),
                value(env, "AENV_CGROUP_PARENT", hostEnv),
                path(env, "AENV_CGROUP_ROOT", hostEnv),
                "1".equals(value(env, "AENV_SWAP_ACCOUNTING", hostEnv)),
                Path.of("/run/agentenv"));
    }

    /** The root filesystem of the current build of a template, resolved through its {@code current} link. */
    public Path templateRootfs(String template) throws IOException {
        if (!template.matches("[a-z0-9][a-z0-9_-]{0,62}")) {
            throw new IllegalArgumentException("bad template name: " + template);
        }
        Path current = templatesDir.resolve(template).resolve("current");
        if (!Files.exists(current)) {
            throw new IOException("template '" + template + "' has not been built (no " + current + ")");
        }
        return current.toRealPath().resolve("rootfs");
    }

    /** runc's state directory for this backend's containers (kept apart from any other runc user on the host). */
    public Path runcRoot() {
        return runDir.resolve("runc");
    }

    /**
     * The same host with separate names, so that a second user (tests while a server runs) never sees, and no reaper
     * ever removes, the other's resources: another netns/veth prefix, runc state root and cgroup parent.
     *
     * @param prefix must extend this layout's prefix (the host's firewall rules match interfaces by it) without
     *        making the other's veth names match ({@code <prefix>v...}), so it must not continue with "v" or "-"
     */
    public HostLayout isolatedAs(String prefix, Path otherRunDir, String otherCgroupParent) {
        if (!prefix.startsWith(namePrefix)
                || prefix.length() == namePrefix.length()
                || prefix.charAt(namePrefix.length()) == 'v') {
            throw new IllegalArgumentException(
                    "name prefix must extend the host's '" + namePrefix + "' with something other than 'v': " + prefix);
        }
        if (otherRunDir.equals(runDir) || otherCgroupParent.equals(cgroupParent)) {
            throw new IllegalArgumentException("an isolated layout needs its own run dir and cgroup parent");
        }
        return new HostLayout(
                cacheDir,
                runc,
                criu,
                criuRuncConfig,
                templatesDir,
                resolvConf,
                addressing,
                prefix,
                otherCgroupParent,
                cgroupRoot,
                swapAccounting,
                otherRunDir);
    }

    private static String value(Map<String, String> env, String key, Path file) {
        String v = env.get(key);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException(file + " lacks " + key + "; rerun scripts/setup-host.sh");
        }
        return v;
    }

    private static Path path(Map<String, String> env, String key, Path file) {
        return Path.of(value(env, key, file));
    }
}
