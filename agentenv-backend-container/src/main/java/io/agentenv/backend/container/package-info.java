/**
 * Container sandboxes on Linux without KVM: the building blocks of the container backend.
 *
 * <p>How they fit (one sandbox): {@link io.agentenv.backend.container.NetnsPool} hands out a pre-created network
 * namespace with a veth pair and a /30 ({@link io.agentenv.backend.container.SlotAddressing});
 * {@link io.agentenv.backend.container.OverlayMounts} mounts the template rootfs (and snapshot layers) under a private
 * upper dir ({@link io.agentenv.backend.container.SandboxDirs}); {@link io.agentenv.backend.container.OciSpecs} turns a
 * {@link io.agentenv.backend.container.ContainerSpec} into the OCI config (namespaces, cgroup limits, capabilities,
 * no_new_privs, {@link io.agentenv.backend.container.SeccompPolicy}, masked /proc, read-only JDK, the envd dir);
 * {@link io.agentenv.backend.container.RuncRuntime} creates, starts, pauses, checkpoints (CRIU to disk) and restores
 * it; {@link io.agentenv.backend.container.CgroupTree} reads usage, freezes and thaws, and reaps cgroup v1 dirs;
 * {@link io.agentenv.backend.container.HostInventory} finds and removes leftovers by name. Every external program runs
 * through the {@link io.agentenv.backend.container.ProcessRunner} seam.
 *
 * <p>The host must have been prepared by {@code scripts/setup-host.sh}; {@link io.agentenv.backend.container.HostLayout}
 * reads what it prepared. See docs/host-setup.md.
 */
package io.agentenv.backend.container;
