package io.agentenv.backend.container.network;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.host.ProcessRunner;
import io.agentenv.backend.container.host.SlotAddressing;
import io.agentenv.spi.BackendException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Network slots for sandboxes. Slot N is the N-th /30 of the sandbox range, the veth pair {@code <prefix>v<N>} (host
 * end, with the host address) / eth0 (the sandbox end) and the sandbox's network namespace pinned at
 * {@code /run/netns/<prefix>-n<N>}. The namespace belongs to the sandbox's user namespace, so its runtime makes it, and
 * the runtime's hook ({@code OciSpecs#NETWORK_HOOK}) makes the pair and the pin then: nothing of a slot can be made
 * ahead, and this pool hands out indexes. A released slot is destroyed (never reused with old state: conntrack entries,
 * routes or sockets of the previous sandbox) and its index becomes free. Isolation and egress come from the host
 * setup's nftables table, which matches every interface by the prefix.
 */
public final class NetnsPool implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NetnsPool.class);
    private static final Duration IP_TIMEOUT = Duration.ofSeconds(15);
    /**
     * The network interfaces of this process's own network namespace, one directory each (their IPv4 settings):
     * {@code /sys/class/net} would show those of the namespace the sysfs mount was made in, which is not this one when
     * the server runs in a network namespace of its own (a node of a local cluster) on the host's mounts.
     */
    static final Path LINKS = Path.of("/proc/sys/net/ipv4/conf");

    private final ProcessRunner runner;
    private final EgressFirewall firewall;
    private final SlotAddressing addressing;
    private final String prefix;
    private final int firstSlot;
    private final int slotCount;

    private final Object lock = new Object();
    /** Indexes handed out (or being released). Guarded by lock. */
    private final BitSet taken = new BitSet();
    /** Retired slots whose veth is still being removed. Guarded by lock. */
    private final Set<Thread> retiring = new HashSet<>();
    /** Guarded by lock. */
    private boolean closed;

    /**
     * @param firstSlot the first slot index this pool may use (pools with the same prefix must not overlap)
     * @param slotCount how many slots it may use
     */
    public NetnsPool(ProcessRunner runner, EgressFirewall firewall, HostLayout layout, int firstSlot, int slotCount) {
        this.runner = requireNonNull(runner, "runner is null");
        this.firewall = requireNonNull(firewall, "firewall is null");
        this.addressing = layout.addressing();
        this.prefix = layout.namePrefix();
        if (firstSlot < 0 || slotCount < 1 || (long) firstSlot + slotCount > addressing.slotCount()) {
            throw new IllegalArgumentException(
                    "slots " + firstSlot + "+" + slotCount + " do not fit " + addressing.cidr());
        }
        this.firstSlot = firstSlot;
        this.slotCount = slotCount;
    }

    /** The netns name prefix of this pool's slots. */
    public String netnsPrefix() {
        return prefix + "-n";
    }

    /** The host veth name prefix of this pool's slots. */
    public String vethPrefix() {
        return prefix + "v";
    }

    /** Slots handed out (to sandboxes and warm pool members). */
    public int inUse() {
        synchronized (lock) {
            return taken.cardinality();
        }
    }

    /** How many slots this pool may use. */
    public int slotCount() {
        return slotCount;
    }

    /** A free slot for one sandbox: its names and addresses; its runtime's hook makes its network. */
    public NetSlot acquire() throws NoFreeSlotException {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the netns pool is closed");
            }
            int offset = taken.nextClearBit(0);
            if (offset >= slotCount) {
                throw new NoFreeSlotException(slotCount);
            }
            taken.set(offset);
            return slot(firstSlot + offset);
        }
    }

    /**
     * Destroys the slot (its egress rules, netns and veth pair) and frees its index. The sandbox's processes must be
     * gone.
     */
    public void release(NetSlot slot) throws CommandFailedException, InterruptedException {
        firewall.remove(slot);
        destroy(slot);
        // only now: an index whose netns or veth could not be removed stays taken (until the start-up reaper) rather
        // than collide with a new slot of the same names
        synchronized (lock) {
            taken.clear(slot.index() - firstSlot);
        }
    }

    /**
     * Like {@link #release}, for a caller that waits: the slot's egress rules and netns are gone when this returns,
     * and with the netns its veth end; the host end's removal (the kernel's unregister: an RCU wait of 25–40 ms) and
     * the index's return finish on a virtual thread, so no new slot collides with its names meanwhile. {@link #close}
     * waits for them. The sandbox's processes must be gone.
     */
    public void retire(NetSlot slot) throws CommandFailedException, InterruptedException {
        firewall.remove(slot);
        deleteNetns(slot.netnsName());
        Thread finishing =
                Thread.ofVirtual().name("netns-retire-" + slot.index()).unstarted(() -> finishRetiring(slot));
        synchronized (lock) {
            retiring.add(finishing);
            finishing.start(); // under the lock: close() never sees it unstarted (a join would not wait)
        }
    }

    private void finishRetiring(NetSlot slot) {
        try {
            deleteLink(slot.hostVeth());
            synchronized (lock) {
                taken.clear(slot.index() - firstSlot);
            }
        } catch (CommandFailedException e) {
            // the index stays taken (until the start-up reaper), as after a failed release
            log.atWarn()
                    .addKeyValue("netns", slot.netnsName())
                    .setCause(e)
                    .log("could not remove a retired slot's veth");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            synchronized (lock) {
                retiring.remove(Thread.currentThread());
            }
        }
    }

    /** Every slot of the pool is handed out (or being released). */
    public static final class NoFreeSlotException extends Exception {
        private final int slotCount;

        NoFreeSlotException(int slotCount) {
            super("no free network slot: all " + slotCount + " are in use");
            this.slotCount = slotCount;
        }

        /** The SPI's typed capacity failure (the API answers 429), naming the limit and the setting that raises it. */
        public BackendException.Exhausted exhausted() {
            return new BackendException.Exhausted(
                    "all " + slotCount + " sandbox slots of this server are in use" + " (AENV_BACKEND_MAX_SANDBOXES)",
                    getMessage() + " (AENV_BACKEND_MAX_SANDBOXES)",
                    this);
        }
    }

    /** Waits for the retired slots' veths to be removed. Slots handed out stay theirs to release. */
    @Override
    public void close() throws InterruptedException {
        List<Thread> finishing;
        synchronized (lock) {
            closed = true;
            finishing = new ArrayList<>(retiring);
        }
        for (Thread thread : finishing) {
            thread.join();
        }
    }

    /**
     * At start-up, before any slot is handed out: the slots of this pool's range whose network namespace a previous
     * run left, marked taken so that no new slot collides with them. Each must be {@link #release released}, or kept
     * by a sandbox that is re-attached.
     */
    public Map<Integer, NetSlot> adoptExisting() throws IOException {
        Map<Integer, NetSlot> found = new TreeMap<>();
        List<String> names = existingNames();
        synchronized (lock) {
            for (String name : names) {
                String suffix = name.substring(
                        name.startsWith(netnsPrefix())
                                ? netnsPrefix().length()
                                : vethPrefix().length());
                if (!suffix.matches("[0-9]{1,6}")) {
                    continue;
                }
                int index = Integer.parseInt(suffix);
                if (index < firstSlot || index >= firstSlot + slotCount) {
                    continue;
                }
                taken.set(index - firstSlot);
                found.put(index, slot(index));
            }
        }
        return found;
    }

    private NetSlot slot(int index) {
        return new NetSlot(
                index,
                netnsPrefix() + index,
                vethPrefix() + index,
                addressing.hostAddress(index),
                addressing.sandboxAddress(index));
    }

    private static List<String> linkNames(String prefix) throws IOException {
        try (Stream<Path> links = Files.list(LINKS)) {
            return links.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith(prefix) && !n.equals("all") && !n.equals("default"))
                    .sorted()
                    .toList();
        }
    }

    /**
     * Names of pinned network namespaces and veths with this pool's prefixes that exist on the host: at start-up,
     * before anything is handed out, these are a crashed server's leftovers.
     */
    List<String> existingNames() throws IOException {
        List<String> names = new ArrayList<>();
        if (Files.isDirectory(HostLayout.NETNS_DIR)) {
            try (Stream<Path> entries = Files.list(HostLayout.NETNS_DIR)) {
                entries.map(p -> p.getFileName().toString())
                        .filter(n -> n.startsWith(netnsPrefix()))
                        .sorted()
                        .forEach(names::add);
            }
        }
        names.addAll(linkNames(vethPrefix()));
        return names;
    }

    /** {@link #existingNames()} plus the egress chains of this pool's veths: everything a leak check looks for. */
    public List<String> existingResources() throws IOException, CommandFailedException, InterruptedException {
        List<String> names = new ArrayList<>(firewall.chainsFor(vethPrefix()));
        names.addAll(existingNames());
        return names;
    }

    /**
     * Deletes every egress chain, netns and host veth with this pool's prefixes. Only for start-up, before the pool is
     * used.
     */
    public List<String> reapLeftovers() throws IOException, CommandFailedException, InterruptedException {
        List<String> names = new ArrayList<>(firewall.reap(vethPrefix()));
        names.addAll(existingNames());
        for (String name : names) {
            if (name.startsWith(netnsPrefix())) {
                deleteNetns(name);
            } else {
                deleteLink(name);
            }
        }
        if (!names.isEmpty()) {
            log.atWarn().addKeyValue("removed", names).log("removed leftover network namespaces and veths");
        }
        return names;
    }

    /**
     * Removes the veth pair, then the pinned namespace. In this order: a namespace is cleaned up by the kernel in the
     * background, so the pair would vanish at some moment after its deletion, between a check that the host end
     * exists and its removal.
     */
    private void destroy(NetSlot slot) throws CommandFailedException, InterruptedException {
        deleteLink(slot.hostVeth()); // deleting one end of a veth pair deletes both
        deleteNetns(slot.netnsName());
    }

    private void deleteLink(String name) throws CommandFailedException, InterruptedException {
        if (!Files.exists(LINKS.resolve(name))) {
            return;
        }
        try {
            runner.run(Command.of(IP_TIMEOUT, "ip", "link", "delete", name));
        } catch (CommandFailedException e) {
            if (!e.stderrTail().contains("Cannot find device")
                    && !e.stderrTail().contains("No such device")) {
                throw e;
            }
        }
    }

    private void deleteNetns(String name) throws CommandFailedException, InterruptedException {
        if (!Files.exists(HostLayout.NETNS_DIR.resolve(name))) {
            return;
        }
        runner.run(Command.of(IP_TIMEOUT, "ip", "netns", "delete", name));
    }
}
