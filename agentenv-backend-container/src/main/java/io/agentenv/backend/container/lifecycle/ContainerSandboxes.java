package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.host.SandboxMeter;
import io.agentenv.backend.container.network.EgressFirewall;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.Resources;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;

/**
 * Makes the backend's {@link ContainerSandbox}es: each gets its own {@link Generation} (dirs, slot, phase) and meter,
 * and shares the one start, pause, capture and release of the backend. Built once by {@code ContainerBackendFactory}.
 */
public final class ContainerSandboxes {

    private static final Path MEMINFO = Path.of("/proc/meminfo");

    private final ContainerNames names;
    private final NetnsPool pool;
    private final HostLayout layout;
    private final GenerationStart starting;
    private final GenerationPause pausing;
    private final GenerationCapture capture;
    private final GenerationRelease release;
    private final EnvdClients envdClients;
    private final EgressFirewall firewall;
    private final Clock clock;

    public ContainerSandboxes(
            ContainerNames names,
            NetnsPool pool,
            HostLayout layout,
            GenerationStart starting,
            GenerationPause pausing,
            GenerationCapture capture,
            GenerationRelease release,
            EnvdClients envdClients,
            EgressFirewall firewall,
            Clock clock) {
        this.names = requireNonNull(names, "names is null");
        this.pool = requireNonNull(pool, "pool is null");
        this.layout = requireNonNull(layout, "layout is null");
        this.starting = requireNonNull(starting, "starting is null");
        this.pausing = requireNonNull(pausing, "pausing is null");
        this.capture = requireNonNull(capture, "capture is null");
        this.release = requireNonNull(release, "release is null");
        this.envdClients = requireNonNull(envdClients, "envdClients is null");
        this.firewall = requireNonNull(firewall, "firewall is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /**
     * A sandbox of this backend in its initial phase, with its generation and its meter.
     *
     * @param id   the container: the spec's own ({@link ContainerNames#containerId}) or a warm-pool member's
     * @param slot its network slot, given back to the pool when it is released
     * @param warm the warm-pool member this sandbox claims at start (its container, dirs and slot), if any
     */
    public ContainerSandbox create(
            LaunchSpec spec,
            ContainerSandbox.Launch launch,
            ContainerId id,
            NetSlot slot,
            Optional<WarmPool.Member> warm,
            Resources resources,
            ContainerSandbox.Phase initial) {
        Generation gen = new Generation(spec, launch, id, names.dirs(id), slot, pool, resources, initial, warm);
        SandboxMeter meter =
                new SandboxMeter(layout.cgroupRoot(), layout.cgroupParent(), id, gen.dirs.disk(), MEMINFO, clock);
        return new ContainerSandbox(gen, starting, pausing, capture, release, envdClients, firewall, meter, clock);
    }
}
