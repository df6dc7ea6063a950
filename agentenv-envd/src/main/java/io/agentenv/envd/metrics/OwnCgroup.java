package io.agentenv.envd.metrics;

import java.io.IOException;
import java.util.Optional;
import java.util.OptionalLong;

/** The cgroup this process runs in, as seen through the sandbox's cgroup mount; found by {@link OwnCgroups}. */
sealed interface OwnCgroup permits CgroupV1, CgroupV2 {
    /** CPU time used by the cgroup since it was created, in nanoseconds; empty when the controller is unreadable. */
    OptionalLong cpuNanos() throws IOException;

    /** The cgroup's memory; empty when the controller is unreadable. */
    Optional<CgroupMemory> memory() throws IOException;
}
