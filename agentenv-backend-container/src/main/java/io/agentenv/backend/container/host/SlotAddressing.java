package io.agentenv.backend.container.host;

/**
 * The /30 plan of the network namespace pool: slot N owns {@code base + 4N}/30, with the host end of its veth pair at
 * {@code .1} and the sandbox's eth0 at {@code .2} of that block.
 *
 * @param base the first address of the range, as an unsigned 32-bit value
 * @param prefixLength the range's prefix length (8..28)
 */
public record SlotAddressing(long base, int prefixLength) {

    public SlotAddressing {
        if (prefixLength < 8 || prefixLength > 28) {
            throw new IllegalArgumentException("sandbox range prefix must be /8../28, got /" + prefixLength);
        }
        if (base < 0 || base > 0xFFFF_FFFFL || (base & (size(prefixLength) - 1)) != 0) {
            throw new IllegalArgumentException(
                    "sandbox range base is not aligned to /" + prefixLength + ": " + dotted(base));
        }
    }

    /** Parses {@code a.b.c.d/len}. */
    public static SlotAddressing parse(String cidr) {
        String[] parts = cidr.split("/", -1);
        if (parts.length != 2) {
            throw new IllegalArgumentException("not an IPv4 CIDR: " + cidr);
        }
        String[] octets = parts[0].split("\\.", -1);
        if (octets.length != 4) {
            throw new IllegalArgumentException("not an IPv4 CIDR: " + cidr);
        }
        long value = 0;
        try {
            for (String octet : octets) {
                int o = Integer.parseInt(octet);
                if (o < 0 || o > 255 || !octet.equals(Integer.toString(o))) {
                    throw new IllegalArgumentException("not an IPv4 CIDR: " + cidr);
                }
                value = (value << 8) | o;
            }
            return new SlotAddressing(value, Integer.parseInt(parts[1]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not an IPv4 CIDR: " + cidr, e);
        }
    }

    public int slotCount() {
        return (int) (size(prefixLength) / 4);
    }

    public String hostAddress(int slot) {
        return dotted(block(slot) + 1);
    }

    public String sandboxAddress(int slot) {
        return dotted(block(slot) + 2);
    }

    public String cidr() {
        return dotted(base) + "/" + prefixLength;
    }

    private long block(int slot) {
        if (slot < 0 || slot >= slotCount()) {
            throw new IllegalArgumentException("slot " + slot + " outside 0.." + (slotCount() - 1) + " of " + cidr());
        }
        return base + 4L * slot;
    }

    private static long size(int prefixLength) {
        return 1L << (32 - prefixLength);
    }

    private static String dotted(long v) {
        return ((v >> 24) & 0xFF) + "." + ((v >> 16) & 0xFF) + "." + ((v >> 8) & 0xFF) + "." + (v & 0xFF);
    }
}
