package io.agentenv.backend.container;

import java.nio.file.Path;
import java.util.List;

/**
 * Host resources of this backend that exist at one moment: runc containers, cgroups, mounts under the sandboxes
 * directory, network namespaces and host veths. After every sandbox is gone, all lists must be empty.
 */
record Leftovers(List<ContainerId> containers, List<String> cgroups, List<Long> processes, List<Path> mounts,
                 List<String> network) {

    Leftovers {
        containers = List.copyOf(containers);
        cgroups = List.copyOf(cgroups);
        processes = List.copyOf(processes);
        mounts = List.copyOf(mounts);
        network = List.copyOf(network);
    }

    boolean isEmpty() {
        return containers.isEmpty() && cgroups.isEmpty() && processes.isEmpty() && mounts.isEmpty() && network.isEmpty();
    }
}
