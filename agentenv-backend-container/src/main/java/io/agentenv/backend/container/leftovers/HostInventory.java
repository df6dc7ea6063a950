package io.agentenv.backend.container.leftovers;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.Attempts;
import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.MountTable;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.LoopDevices;
import io.agentenv.backend.container.storage.OverlayMounts;
import io.agentenv.backend.container.storage.Unmounts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds this backend's resources on the host by name (container ids and cgroups by id prefix, netns and veths by the
 * pool's prefixes, mounts and disks' loop devices by location) and removes them: the start-up reconciler after a crash, and the leak check
 * after every test.
 */
public final class HostInventory {

    private static final Logger log = LoggerFactory.getLogger(HostInventory.class);

    private final RuncRuntime runc;
    private final CgroupTree cgroups;
    private final OverlayMounts overlays;
    private final NetnsPool pool;
    private final Path sandboxesDir;

    /**
     * @param sandboxesDir where sandbox directories (overlay mount points, bundles) live
     */
    public HostInventory(
            RuncRuntime runc, CgroupTree cgroups, OverlayMounts overlays, NetnsPool pool, Path sandboxesDir) {
        this.runc = requireNonNull(runc, "runc is null");
        this.cgroups = requireNonNull(cgroups, "cgroups is null");
        this.overlays = requireNonNull(overlays, "overlays is null");
        this.pool = requireNonNull(pool, "pool is null");
        this.sandboxesDir = requireNonNull(sandboxesDir, "sandboxesDir is null");
    }

    /** What exists now among containers and cgroups whose id starts with {@code idPrefix}, and all mounts and slots. */
    public Leftovers scan(String idPrefix) throws IOException, CommandFailedException, InterruptedException {
        Predicate<String> ours = name -> name.startsWith(idPrefix);
        List<ContainerId> containers =
                runc.list().stream().filter(id -> ours.test(id.value())).toList();
        List<String> groups = cgroups.names().stream().filter(ours).toList();
        List<Long> processes = new ArrayList<>();
        for (String group : groups) {
            processes.addAll(cgroups.pids(group));
        }
        List<Path> mounts = new ArrayList<>(MountTable.mountsUnder(sandboxesDir));
        mounts.addAll(stateDirMounts(idPrefix));
        return new Leftovers(
                containers,
                groups,
                processes,
                mounts,
                strayStateDirs(idPrefix, containers),
                LoopDevices.backedUnder(sandboxesDir),
                pool.existingResources());
    }

    /**
     * runc's state dirs of containers whose id starts with {@code idPrefix} and that runc does not list ({@code listed}):
     * what a restore interrupted before runc recorded its container leaves (its {@code runc delete} finds nothing).
     */
    private List<Path> strayStateDirs(String idPrefix, List<ContainerId> listed) throws IOException {
        Path root = runc.stateRoot();
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        Set<String> known = listed.stream().map(ContainerId::value).collect(Collectors.toSet());
        try (Stream<Path> dirs = Files.list(root)) {
            return dirs.filter(dir -> {
                        String name = dir.getFileName().toString();
                        return name.startsWith(idPrefix) && !known.contains(name);
                    })
                    .sorted()
                    .toList();
        }
    }

    /**
     * Mounts below runc's state dirs of containers whose id starts with {@code idPrefix}: the {@code criu-root} a
     * failed {@code runc restore} can leave (its container may be unknown to {@code runc list}).
     */
    public List<Path> stateDirMounts(String idPrefix) throws IOException {
        Path root = runc.stateRoot();
        return MountTable.mountsUnder(root).stream()
                .filter(m -> m.getNameCount() > root.getNameCount()
                        && root.relativize(m).getName(0).toString().startsWith(idPrefix))
                .toList();
    }

    /**
     * Removes what {@link #scan} finds: thaws frozen cgroups (runc waits on a stuck freeze), deletes containers
     * (killing their processes), kills and removes orphaned cgroups, unmounts (deepest first) and deletes network
     * slots. Only when none of them is in use. Every item is attempted; the first failure is thrown at the end with
     * the others suppressed.
     */
    public Leftovers reap(String idPrefix) throws Exception {
        Leftovers found = scan(idPrefix);
        List<Exception> failures = new ArrayList<>();
        for (String group : found.cgroups()) {
            Attempts.attempt(failures, () -> cgroups.thawIfFrozen(group));
        }
        for (Path mount : stateDirMounts(idPrefix)) { // before runc deletes (and removes) the state dir
            Attempts.attempt(failures, () -> Unmounts.unmountOrDetach(mount));
        }
        for (ContainerId id : found.containers()) {
            Attempts.attempt(failures, () -> runc.delete(id));
        }
        for (Path dir : found.stateDirs()) {
            Attempts.attempt(failures, () -> FileTrees.deleteTree(dir)); // refuses a tree with a mount still below it
        }
        for (String group :
                cgroups.names().stream().filter(n -> n.startsWith(idPrefix)).toList()) {
            Attempts.attempt(failures, () -> cgroups.reap(group));
        }
        for (Path mount : MountTable.mountsUnder(sandboxesDir)) {
            Attempts.attempt(failures, () -> overlays.unmount(mount));
        }
        Attempts.attempt(failures, pool::reapLeftovers);
        if (!failures.isEmpty()) {
            Exception first = failures.getFirst();
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
        if (!found.isEmpty()) {
            log.atWarn()
                    .addKeyValue("containers", found.containers())
                    .addKeyValue("cgroups", found.cgroups())
                    .addKeyValue("mounts", found.mounts())
                    .addKeyValue("state_dirs", found.stateDirs())
                    .addKeyValue("loops", found.loops())
                    .addKeyValue("network", found.network())
                    .log("removed leftover sandbox resources");
        }
        return found;
    }
}
