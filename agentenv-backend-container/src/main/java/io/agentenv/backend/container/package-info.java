/**
 * Container sandboxes on Linux without KVM: the building blocks of the container backend.
 *
 * <p>How they fit (one sandbox): {@link io.agentenv.backend.container.network.NetnsPool} hands out a pre-created network
 * namespace with a veth pair and a /30 ({@link io.agentenv.backend.container.host.SlotAddressing});
 * {@link io.agentenv.backend.container.storage.OverlayMounts} mounts the template rootfs (and snapshot layers) under a private
 * upper dir ({@link io.agentenv.backend.container.storage.SandboxDirs}); {@link io.agentenv.backend.container.runtime.OciSpecs} turns a
 * {@link io.agentenv.backend.container.runtime.ContainerSpec} into the OCI config (namespaces, cgroup limits, capabilities,
 * no_new_privs, {@link io.agentenv.backend.container.runtime.SeccompPolicy}, masked /proc, read-only JDK, the envd dir);
 * {@link io.agentenv.backend.container.runtime.RuncRuntime} creates, starts, pauses, checkpoints (CRIU to disk) and restores
 * it; {@link io.agentenv.backend.container.host.CgroupTree} reads usage, freezes and thaws, and reaps cgroup v1 dirs;
 * {@link io.agentenv.backend.container.leftovers.HostInventory} finds and removes leftovers by name. Every external program runs
 * through the {@link io.agentenv.backend.container.host.ProcessRunner} seam.
 *
 * <p>The host must have been prepared by {@code scripts/setup-host.sh}; {@link io.agentenv.backend.container.host.HostLayout}
 * reads what it prepared. See docs/host-setup.md.
 */
package io.agentenv.backend.container;
