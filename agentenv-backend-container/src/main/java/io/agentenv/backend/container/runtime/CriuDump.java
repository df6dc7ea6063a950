package io.agentenv.backend.container.runtime;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.backend.container.guest.GuestMounts;
import io.agentenv.backend.container.host.MountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The {@code criu dump} that {@code runc checkpoint} (1.1) runs for a container, run without runc: runc's own start,
 * its CRIU version check (a second CRIU run) and its teardown of the container cost ~15–20 ms of every pause, and the
 * teardown is done anyway, alongside the rest of the release, by {@code runc delete}. Everything runc would pass comes
 * from its state file ({@code <root>/<id>/state.json}, which holds the container's config as runc uses it) and the
 * container's own mount table, exactly as runc derives it:
 * <ul>
 *   <li>the init's pid, the rootfs, the CRIU config file of the {@code org.criu.config} label, the freezer cgroup;</li>
 *   <li>the network namespace left out ({@code --empty-ns net}): it belongs to the container's user namespace, so it
 *       cannot be an external one the restore joins; a restore gets an empty one of its own, which runc's
 *       createRuntime hook plumbs ({@code OciSpecs#NETWORK_HOOK});</li>
 *   <li>every bind mount as external under its destination (/dev and /sys/fs/cgroup among them, see
 *       {@link GuestMounts}; unless it is a tmpfs restored from an older checkpoint), the v1 cgroup mounts under {@code /sys/fs/cgroup}
 *       (runc makes them binds when there is no cgroup namespace), masked paths that are files as {@code /dev/null},
 *       and the devices;</li>
 *   <li>the init's stdio paths as {@code descriptors.json} in the images, which {@code runc restore} reads.</li>
 * </ul>
 * A restore therefore still goes through {@code runc restore}, which sees the same images as after its own dump.
 * Used for pause (the tasks are killed) and snapshot (they run on, {@code --leave-running}).
 */
public final class CriuDump {

    static final String DESCRIPTORS = "descriptors.json";
    static final String LOG = "dump.log";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What one dump needs, read from runc's state and the container's mounts. */
    record Facts(
            long pid,
            Path rootfs,
            Optional<Path> criuConfig,
            Path freezerCgroup,
            List<String> externalMounts,
            String descriptors) {
        Facts {
            requireNonNull(rootfs, "rootfs is null");
            requireNonNull(criuConfig, "criuConfig is null");
            requireNonNull(freezerCgroup, "freezerCgroup is null");
            externalMounts = List.copyOf(externalMounts);
            requireNonNull(descriptors, "descriptors is null");
            if (pid < 1) {
                throw new IllegalArgumentException("pid must be positive: " + pid);
            }
        }
    }

    private CriuDump() {}

    /** Reads a running container's facts: runc's state file, the init's mount table and files. */
    static Facts read(Path stateFile) throws IOException {
        JsonNode state = JSON.readTree(Files.readString(stateFile));
        long pid = state.path("init_process_pid").asLong();
        Path proc = Path.of("/proc", Long.toString(pid));
        Path root = proc.resolve("root");
        return facts(
                state,
                Files.readString(proc.resolve("mountinfo")),
                path -> Files.exists(root.resolve(path.substring(1)), LinkOption.NOFOLLOW_LINKS)
                        && !Files.isDirectory(root.resolve(path.substring(1)), LinkOption.NOFOLLOW_LINKS));
    }

    /**
     * The facts from runc's state (its {@code config}), the container's mountinfo, and which
     * masked paths exist inside as something other than a directory (runc masks those with /dev/null).
     */
    static Facts facts(JsonNode state, String mountinfo, Predicate<String> maskedFileExists) throws IOException {
        JsonNode config = state.path("config");
        List<String> external = new ArrayList<>();
        boolean cgroupNamespace = false;
        for (JsonNode ns : config.path("namespaces")) {
            cgroupNamespace |= ns.path("type").asText().equals("NEWCGROUP");
        }
        for (JsonNode mount : config.path("mounts")) {
            String destination = mount.path("destination").asText();
            switch (mount.path("device").asText()) {
                case "bind" -> {
                    if (!tmpfsRootAt(mountinfo, destination)) {
                        external.add(mnt(destination, destination));
                    }
                }
                case "cgroup" -> {
                    if (!cgroupNamespace) {
                        for (String binds : cgroupMountsUnder(mountinfo, destination)) {
                            external.add(mnt(binds, binds));
                        }
                    }
                }
                default -> {
                    // dumped by CRIU itself (proc, sysfs, tmpfs, devpts, mqueue)
                }
            }
        }
        for (JsonNode masked : config.path("mask_paths")) {
            if (maskedFileExists.test(masked.asText())) {
                external.add(mnt(masked.asText(), "/dev/null"));
            }
        }
        for (JsonNode device : config.path("devices")) {
            String path = device.path("path").asText();
            external.add(mnt(path, path));
        }
        Optional<Path> criuConfig = Optional.empty();
        for (JsonNode label : config.path("labels")) {
            String text = label.asText();
            if (text.startsWith("org.criu.config=") && text.length() > "org.criu.config=".length()) {
                criuConfig = Optional.of(Path.of(text.substring("org.criu.config=".length())));
            }
        }
        String freezer = state.path("cgroup_paths").path("freezer").asText();
        if (freezer.isEmpty()) {
            throw new IOException("container has no freezer cgroup in runc's state");
        }
        return new Facts(
                state.path("init_process_pid").asLong(),
                Path.of(config.path("rootfs").asText()),
                criuConfig,
                Path.of(freezer),
                external,
                JSON.writeValueAsString(state.path("external_descriptors")));
    }

    /**
     * The command line: a dump logging into the work dir at level 3 (errors, warnings and CRIU's steps, with timestamps:
     * its time and a failure's cause come from there); the tasks are killed once written, or run on. Level 4 (what runc
     * asks for) writes ~4,200 lines per sandbox dump, one write(2) each (42 % of the dump's system calls), for ~1,770
     * at level 3: 3–4 ms less CPU per dump (docs/benchmarks.md, "Pause: freeze first, patched CRIU, release in
     * parallel").
     */
    static List<String> argv(Path criu, Path images, Path work, Facts facts, RuncRuntime.AfterCheckpoint after) {
        List<String> argv = new ArrayList<>(List.of(
                criu.toString(),
                "dump",
                "--no-default-config",
                "--tree",
                Long.toString(facts.pid()),
                "--images-dir",
                images.toString(),
                "--work-dir",
                work.toString(),
                "--log-file",
                LOG,
                "-v3",
                "--root",
                facts.rootfs().toString(),
                "--freeze-cgroup",
                facts.freezerCgroup().toString(),
                "--empty-ns",
                "net"));
        for (String mount : facts.externalMounts()) {
            argv.add("--external");
            argv.add(mount);
        }
        if (after == RuncRuntime.AfterCheckpoint.LEAVE_RUNNING) {
            argv.add("--leave-running");
        }
        facts.criuConfig().ifPresent(config -> argv.addAll(List.of("--config", config.toString())));
        return argv;
    }

    private static String mnt(String key, String value) {
        return "mnt[" + key + "]:" + value;
    }

    /**
     * Whether the mount at {@code mountPoint} is the root of a tmpfs. A bind in the config that shows up as one was
     * not mounted from that config: the container was restored from a checkpoint taken when runc still mounted a tmpfs
     * there (/dev and /sys/fs/cgroup before {@link GuestMounts}), which CRIU restored as it was. It is dumped as the
     * tmpfs it is (its archive), not as an external bind; the restore of that dump brings it back as such again.
     */
    static boolean tmpfsRootAt(String mountinfo, String mountPoint) {
        boolean tmpfs = false;
        for (MountTable.Entry entry : MountTable.parse(mountinfo.lines().toList())) {
            if (entry.mountPoint().equals(mountPoint)) {
                tmpfs = entry.fsType().equals("tmpfs") && entry.root().equals("/"); // the last mount there is on top
            }
        }
        return tmpfs;
    }

    /** Mount points of cgroup (v1) mounts directly below {@code destination} in a mountinfo text. */
    static List<String> cgroupMountsUnder(String mountinfo, String destination) {
        List<String> found = new ArrayList<>();
        for (MountTable.Entry entry : MountTable.parse(mountinfo.lines().toList())) {
            String mountPoint = entry.mountPoint();
            if (entry.fsType().equals("cgroup")
                    && mountPoint.startsWith(destination + "/")
                    && mountPoint.indexOf('/', destination.length() + 1) < 0) {
                found.add(mountPoint);
            }
        }
        return found;
    }
}
