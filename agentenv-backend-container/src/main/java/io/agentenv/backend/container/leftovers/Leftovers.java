package io.agentenv.backend.container.leftovers;

import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.storage.LoopDevices;
import java.nio.file.Path;
import java.util.List;

/**
 * Host resources of this backend that exist at one moment: runc containers, cgroups, mounts under the sandboxes
 * directory and under runc's state dirs of this backend's containers (what a failed restore leaves), state dirs runc
 * does not list (what an interrupted restore leaves), loop devices of sandbox disks, network namespaces and host veths.
 * After every sandbox is gone, all lists must be empty.
 */
public record Leftovers(
        List<ContainerId> containers,
        List<String> cgroups,
        List<Long> processes,
        List<Path> mounts,
        List<Path> stateDirs,
        List<LoopDevices.Attached> loops,
        List<String> network) {

    public Leftovers {
        containers = List.copyOf(containers);
        cgroups = List.copyOf(cgroups);
        processes = List.copyOf(processes);
        mounts = List.copyOf(mounts);
        stateDirs = List.copyOf(stateDirs);
        loops = List.copyOf(loops);
        network = List.copyOf(network);
    }

    public boolean isEmpty() {
        return containers.isEmpty()
                && cgroups.isEmpty()
                && processes.isEmpty()
                && mounts.isEmpty()
                && stateDirs.isEmpty()
                && loops.isEmpty()
                && network.isEmpty();
    }
}
