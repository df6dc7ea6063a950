package io.agentenv.backend.container.guest;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.storage.Unmounts;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The host directories /dev and /sys/fs/cgroup are bound from (device nodes need root to make). */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class GuestMountsHostTest {

    @FreshHostFixture
    private HostFixture host;

    private Path dir;
    private Path cgroupRoot;

    @BeforeEach
    void setUp() throws Exception {
        dir = host.sandboxesDir.resolve("guest-mounts");
        // a host's cgroup root as this backend meets it: v1 hierarchies, a symlink to a combined one, cgroup2, a
        // hierarchy of a controller runc does not manage
        cgroupRoot = Files.createDirectories(host.sandboxesDir.resolve("cgroup-root"));
        for (String hierarchy : List.of("cpu,cpuacct", "memory", "systemd", "unified", "misc")) {
            Files.createDirectory(cgroupRoot.resolve(hierarchy));
        }
        Files.createFile(cgroupRoot.resolve("unified/cgroup.controllers"));
        Files.createSymbolicLink(cgroupRoot.resolve("cpu"), Path.of("cpu,cpuacct"));
        Files.createSymbolicLink(cgroupRoot.resolve("cpuacct"), Path.of("cpu,cpuacct"));
    }

    @Test
    void dev_holds_runcs_device_nodes_symlinks_and_mount_points_owned_by_root() throws Exception {
        GuestMounts mounts = GuestMounts.prepare(dir, cgroupRoot);

        for (GuestMounts.Device device : GuestMounts.DEVICES) {
            Map<String, Object> attrs = Files.readAttributes(
                    mounts.dev().resolve(device.name()), "unix:mode,rdev,uid", LinkOption.NOFOLLOW_LINKS);
            assertThat((Integer) attrs.get("mode")).as(device.name()).isEqualTo(0020666);
            assertThat((Long) attrs.get("rdev")).as(device.name()).isEqualTo(device.major() * 256L + device.minor());
            assertThat((Integer) attrs.get("uid")).isZero();
        }
        assertThat(Files.readSymbolicLink(mounts.dev().resolve("ptmx"))).isEqualTo(Path.of("pts/ptmx"));
        assertThat(Files.readSymbolicLink(mounts.dev().resolve("stderr"))).isEqualTo(Path.of("/proc/self/fd/2"));
        assertThat(mounts.dev().resolve("shm")).isEmptyDirectory();
        assertThat((Integer) Files.getAttribute(mounts.dev().resolve("shm"), "unix:mode") & 07777)
                .as("runc gives /dev/shm's tmpfs the mode of its mount point")
                .isEqualTo(01777);
        assertThat((Integer) Files.getAttribute(dir, "unix:mode") & 0777)
                .as("only root enters (the sandboxes' root id by an ACL entry the backend adds)")
                .isEqualTo(0700);
        try (InputStream zero = Files.newInputStream(mounts.dev().resolve("zero"))) {
            assertThat(zero.readNBytes(4)).as("a device node that works").containsExactly(0, 0, 0, 0);
        }
        assertThat(names(dir)).containsExactly("cgroup", "dev"); // nothing temporary left
    }

    @Test
    void the_cgroup_skeleton_has_a_mount_point_per_runc_hierarchy_and_the_hosts_symlinks() throws Exception {
        GuestMounts mounts = GuestMounts.prepare(dir, cgroupRoot);

        assertThat(mounts.cgroupHierarchies()).containsExactly("cpu,cpuacct", "memory", "systemd");
        assertThat(names(mounts.cgroup())).containsExactly("cpu", "cpu,cpuacct", "cpuacct", "memory", "systemd");
        assertThat(Files.readSymbolicLink(mounts.cgroup().resolve("cpu"))).isEqualTo(Path.of("cpu,cpuacct"));
        assertThat(mounts.cgroupRoot()).isEqualTo(cgroupRoot);
    }

    @Test
    void a_second_start_keeps_what_the_first_built() throws Exception {
        GuestMounts first = GuestMounts.prepare(dir, cgroupRoot);
        Object devInode = Files.getAttribute(first.dev(), "unix:ino");

        GuestMounts second = GuestMounts.prepare(dir, cgroupRoot);

        assertThat(second).isEqualTo(first);
        assertThat(Files.getAttribute(second.dev(), "unix:ino")).isEqualTo(devInode);
    }

    @Test
    void a_changed_directory_is_replaced_the_old_one_kept_for_sandboxes_that_bind_it() throws Exception {
        GuestMounts first = GuestMounts.prepare(dir, cgroupRoot);
        Files.delete(first.dev().resolve("null"));
        Files.writeString(first.dev().resolve("null"), "a regular file where a device was");
        Files.createDirectory(first.cgroup().resolve("extra"));

        GuestMounts again = GuestMounts.prepare(dir, cgroupRoot);

        assertThat((Integer) Files.getAttribute(again.dev().resolve("null"), "unix:mode", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(0020666);
        assertThat(names(again.cgroup())).doesNotContain("extra");
        List<String> names = names(dir);
        assertThat(names).contains("cgroup", "dev").hasSize(4);
        Path staleDev = dir.resolve(names.stream()
                .filter(n -> n.startsWith(".dev-stale-"))
                .findFirst()
                .orElseThrow());
        assertThat(Files.readString(staleDev.resolve("null")))
                .as("left as it was")
                .isEqualTo("a regular file where a device was");
        assertThat(names).anyMatch(n -> n.startsWith(".cgroup-stale-"));
    }

    @Test
    void a_replaced_directory_is_kept_until_no_mount_namespace_binds_it_then_removed() throws Exception {
        // given both directories replaced, the old /dev bound in another mount namespace (as a sandbox's /dev is), and
        // a directory a concurrent prepare is building
        GuestMounts first = GuestMounts.prepare(dir, cgroupRoot);
        Files.delete(first.dev().resolve("zero"));
        Files.createDirectory(first.cgroup().resolve("extra"));
        GuestMounts.prepare(dir, cgroupRoot);
        Path staleDev = only(dir, ".dev-stale-");
        Path staleCgroup = only(dir, ".cgroup-stale-");
        Path building = Files.createDirectory(dir.resolve(".dev-" + UUID.randomUUID()));
        Path target = Files.createDirectory(host.sandboxesDir.resolve("bind-target"));
        Process holder = new ProcessBuilder(
                        "unshare",
                        "--mount",
                        "--propagation",
                        "private",
                        "sh",
                        "-c",
                        "mount --bind \"$0\" \"$1\" && echo bound && exec sleep 600",
                        staleDev.toString(),
                        target.toString())
                .redirectErrorStream(true)
                .start();
        try {
            assertThat(new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))
                            .readLine())
                    .isEqualTo("bound");

            // when
            List<Path> removed = StaleGuestMounts.removeUnbound(dir);

            // then the unbound one is gone, the bound one and the one being built are kept
            assertThat(removed).containsExactly(staleCgroup);
            assertThat(names(dir))
                    .containsExactlyInAnyOrder(
                            "cgroup",
                            "dev",
                            staleDev.getFileName().toString(),
                            building.getFileName().toString());
            assertThat(staleDev.resolve("null"))
                    .as("nothing removed inside the bound one")
                    .exists();
        } finally {
            holder.destroyForcibly();
            holder.waitFor();
        }

        // and once the namespace is gone, the next start's reaper removes it too
        assertThat(StaleGuestMounts.removeUnbound(dir)).containsExactly(staleDev);
        assertThat(names(dir))
                .containsExactlyInAnyOrder(
                        "cgroup", "dev", building.getFileName().toString());
        assertThat(target).as("the other namespace's bind never showed here").isEmptyDirectory();
    }

    @Test
    void backends_starting_together_remove_the_same_replaced_directories_without_failing() throws Exception {
        // given many replaced directories with many entries each
        Files.createDirectories(dir);
        for (int i = 0; i < 20; i++) {
            Path stale = Files.createDirectory(dir.resolve(".cgroup-stale-" + UUID.randomUUID()));
            for (int j = 0; j < 100; j++) {
                Files.createDirectory(stale.resolve("hierarchy-" + j));
            }
        }

        // when two starts remove them at the same time
        CountDownLatch start = new CountDownLatch(1);
        List<Future<List<Path>>> removals = new ArrayList<>();
        try (ExecutorService starts = Executors.newFixedThreadPool(2)) {
            for (int i = 0; i < 2; i++) {
                removals.add(starts.submit(() -> {
                    start.await();
                    return StaleGuestMounts.removeUnbound(dir);
                }));
            }
            start.countDown();
            for (Future<List<Path>> removal : removals) {
                removal.get(); // then neither failed
            }
        }

        // and all are gone
        assertThat(names(dir)).isEmpty();
    }

    @Test
    void a_replaced_directory_with_a_mount_below_it_on_this_host_is_kept() throws Exception {
        GuestMounts first = GuestMounts.prepare(dir, cgroupRoot);
        Files.delete(first.dev().resolve("zero"));
        GuestMounts.prepare(dir, cgroupRoot);
        Path staleDev = only(dir, ".dev-stale-");
        Path mountPoint = staleDev.resolve("shm");
        assertThat(new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint.toString())
                        .inheritIO()
                        .start()
                        .waitFor())
                .isZero();
        try {
            assertThat(StaleGuestMounts.removeUnbound(dir)).isEmpty();
            assertThat(mountPoint).exists();
        } finally {
            Unmounts.unmount(mountPoint);
        }

        assertThat(StaleGuestMounts.removeUnbound(dir)).containsExactly(staleDev);
    }

    @Test
    void a_change_of_the_hosts_hierarchies_rebuilds_the_cgroup_skeleton() throws Exception {
        GuestMounts.prepare(dir, cgroupRoot);
        Files.createDirectory(cgroupRoot.resolve("pids"));

        GuestMounts again = GuestMounts.prepare(dir, cgroupRoot);

        assertThat(again.cgroupHierarchies()).containsExactly("cpu,cpuacct", "memory", "pids", "systemd");
        assertThat(names(again.cgroup())).contains("pids");
    }

    private static Path only(Path dir, String prefix) throws Exception {
        List<String> found =
                names(dir).stream().filter(name -> name.startsWith(prefix)).toList();
        assertThat(found).hasSize(1);
        return dir.resolve(found.getFirst());
    }

    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
