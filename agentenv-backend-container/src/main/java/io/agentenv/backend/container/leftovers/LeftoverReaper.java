package io.agentenv.backend.container.leftovers;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.GuestMounts;
import io.agentenv.backend.container.guest.StaleGuestMounts;
import io.agentenv.backend.container.host.Attempts;
import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.MountTable;
import io.agentenv.backend.container.host.ProcessRunner;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.LoopBinding;
import io.agentenv.backend.container.storage.LoopDevices;
import io.agentenv.backend.container.storage.OverlayMounts;
import io.agentenv.backend.container.storage.SandboxDirs;
import io.agentenv.backend.container.storage.Unmounts;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up reconciler: removes whatever a previous run of this backend left that no re-attached sandbox uses:
 * containers (killing their processes, thawing frozen ones first), mounts a failed restore left in runc's state dirs,
 * cgroups, overlay and disk mounts (a disk's loop device goes with its mount; one left attached is detached), sandbox dirs (with their disk images), warm-pool
 * claims and network slots. Only this backend's: container ids and cgroups by {@code id_prefix} in its own runc state
 * dir and cgroup parent, mounts and dirs under its sandboxes dir, slots of its range. One thing of the host's: the
 * guest-mount sources moved aside ({@link StaleGuestMounts}), once no sandbox on the host binds them. Every item
 * is attempted; the first failure is thrown at the end with the others suppressed.
 */
public final class LeftoverReaper {

    private static final Logger log = LoggerFactory.getLogger(LeftoverReaper.class);
    private static final Duration LOSETUP_TIMEOUT = Duration.ofSeconds(10);

    private final String prefix;
    private final Path sandboxesDir;
    private final Path claimsDir;
    private final Path guestMountsDir;
    private final ProcessRunner runner;
    private final RuncRuntime runc;
    private final CgroupTree cgroups;
    private final OverlayMounts overlays;
    private final NetnsPool pool;

    /**
     * @param prefix         this backend's container id prefix
     * @param claimsDir      the warm-pool claims ({@code <sandbox id>} → member container)
     * @param guestMountsDir the host's guest-mount sources ({@link GuestMounts#dir})
     */
    public LeftoverReaper(
            String prefix,
            Path sandboxesDir,
            Path claimsDir,
            Path guestMountsDir,
            ProcessRunner runner,
            RuncRuntime runc,
            CgroupTree cgroups,
            OverlayMounts overlays,
            NetnsPool pool) {
        this.prefix = requireNonNull(prefix, "prefix is null");
        this.sandboxesDir = requireNonNull(sandboxesDir, "sandboxesDir is null");
        this.claimsDir = requireNonNull(claimsDir, "claimsDir is null");
        this.guestMountsDir = requireNonNull(guestMountsDir, "guestMountsDir is null");
        this.runner = requireNonNull(runner, "runner is null");
        this.runc = requireNonNull(runc, "runc is null");
        this.cgroups = requireNonNull(cgroups, "cgroups is null");
        this.overlays = requireNonNull(overlays, "overlays is null");
        this.pool = requireNonNull(pool, "pool is null");
    }

    /**
     * Removes what a previous run left behind and no re-attached sandbox uses.
     *
     * @param running    the sandboxes the server still runs (re-attached)
     * @param containers the containers they run in (a claimed warm-pool member's or their own)
     * @param slots      network slots a previous run left that no re-attached sandbox took
     */
    public void reap(Set<SandboxId> running, Set<ContainerId> containers, List<NetSlot> slots) throws BackendException {
        Set<String> claimed = new HashSet<>();
        for (ContainerId id : containers) {
            claimed.add(id.value());
        }
        List<String> removed = new ArrayList<>();
        List<Exception> failures = new ArrayList<>();
        try {
            // What a failed restore left in runc's state dirs (a criu-root mount holding a sandbox's overlay and disk),
            // before runc deletes those dirs; such a container may be unknown to runc list, so its dir goes too.
            Path stateRoot = runc.stateRoot();
            for (Path mount : MountTable.mountsUnder(stateRoot)) {
                if (mount.getNameCount() > stateRoot.getNameCount()
                        && isLeftover(stateRoot.relativize(mount).getName(0).toString(), prefix, claimed)) {
                    Attempts.attempt(failures, () -> Unmounts.unmountOrDetach(mount));
                }
            }
            for (ContainerId id : runc.list()) {
                if (id.value().startsWith(prefix) && !claimed.contains(id.value())) {
                    Attempts.attempt(failures, () -> {
                        cgroups.thawIfFrozen(id.value());
                        runc.delete(id);
                    });
                    removed.add(id.value());
                }
            }
            if (Files.isDirectory(stateRoot)) {
                try (Stream<Path> stateDirs = Files.list(stateRoot)) {
                    for (Path dir : stateDirs.toList()) {
                        if (isLeftover(dir.getFileName().toString(), prefix, claimed)) {
                            Attempts.attempt(failures, () -> FileTrees.deleteTree(dir)); // runc delete did not know it
                            removed.add(dir.getFileName().toString());
                        }
                    }
                }
            }
            for (String group : cgroups.names()) {
                if (group.startsWith(prefix) && !claimed.contains(group)) {
                    Attempts.attempt(failures, () -> cgroups.reap(group));
                }
            }
            // A sandbox's overlay before its disk (the overlay holds the disk busy), then whatever else is mounted
            // there.
            for (Path mount : MountTable.mountsUnder(sandboxesDir)) {
                Path dir = sandboxesDir.relativize(mount);
                if (dir.getNameCount() == 2
                        && !claimed.contains(dir.getName(0).toString())
                        && mount.equals(new SandboxDirs(sandboxesDir.resolve(dir.getName(0))).rootfs())) {
                    Attempts.attempt(failures, () -> overlays.unmount(mount));
                }
            }
            for (Path mount : MountTable.mountsUnder(sandboxesDir)) {
                Path dir = sandboxesDir.relativize(mount);
                if (dir.getNameCount() > 0 && !claimed.contains(dir.getName(0).toString())) {
                    Attempts.attempt(failures, () -> overlays.unmount(mount));
                }
            }
            // A disk's loop device goes with its mount; one still attached (held by what a crash left) is detached:
            // losetup -d on a device still in use only marks it to clear itself on its last close.
            for (LoopDevices.Attached loop : LoopDevices.backedUnder(sandboxesDir)) {
                Path dir = sandboxesDir.relativize(loop.backingPath());
                if (dir.getNameCount() > 1 && !claimed.contains(dir.getName(0).toString())) {
                    Attempts.attempt(failures, () -> detach(runner, loop));
                    removed.add(loop.device());
                }
            }
            try (Stream<Path> dirs = Files.list(sandboxesDir)) {
                for (Path dir : dirs.toList()) {
                    if (!claimed.contains(dir.getFileName().toString())) {
                        Attempts.attempt(failures, () -> FileTrees.deleteTree(dir));
                        removed.add(dir.getFileName().toString());
                    }
                }
            }
            for (NetSlot slot : slots) {
                Attempts.attempt(failures, () -> pool.release(slot));
                removed.add(slot.netnsName());
            }
            Attempts.attempt(failures, () -> reapClaims(running));
            // /dev and /sys/fs/cgroup sources a backend's start replaced and moved aside (GuestMounts.prepare): shared
            // by
            // every backend on this host, so removed only once no sandbox anywhere binds them
            Attempts.attempt(
                    failures,
                    () -> StaleGuestMounts.removeUnbound(guestMountsDir)
                            .forEach(dir -> removed.add(dir.getFileName().toString())));
        } catch (IOException | CommandFailedException e) {
            failures.add(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while reaping leftovers", e);
        }
        if (!removed.isEmpty()) {
            log.atWarn().addKeyValue("removed", removed).log("removed what a previous run left");
        }
        if (!failures.isEmpty()) {
            BackendException.Terminal error = new BackendException.Terminal(
                    "could not remove every leftover: " + failures.getFirst().getMessage(), failures.getFirst());
            failures.subList(1, failures.size()).forEach(error::addSuppressed);
            throw error;
        }
    }

    /**
     * {@code losetup --detach} of a leftover disk's loop device. It may have let go of the file meanwhile (autoclear
     * once the unmounts above dropped the last user; losetup then fails with ENXIO): that is detached too, not a
     * failure.
     */
    public static void detach(ProcessRunner runner, LoopDevices.Attached loop)
            throws CommandFailedException, InterruptedException, IOException {
        try {
            runner.run(Command.of(LOSETUP_TIMEOUT, "losetup", "--detach", "/dev/" + loop.device()));
        } catch (CommandFailedException e) {
            if (!new LoopBinding(loop.device(), loop.backingFile()).released()) {
                throw e;
            }
        }
    }

    private static boolean isLeftover(String containerId, String prefix, Set<String> claimed) {
        return containerId.startsWith(prefix) && !claimed.contains(containerId);
    }

    /** Claim files of sandboxes that no longer run (the pool member they named was reaped). */
    private void reapClaims(Set<SandboxId> running) throws IOException {
        if (!Files.isDirectory(claimsDir)) {
            return;
        }
        try (Stream<Path> claims = Files.list(claimsDir)) {
            for (Path claim : claims.toList()) {
                String name = claim.getFileName().toString();
                if (!SandboxId.isValid(name) || !running.contains(new SandboxId(name))) {
                    Files.deleteIfExists(claim);
                }
            }
        }
    }
}
