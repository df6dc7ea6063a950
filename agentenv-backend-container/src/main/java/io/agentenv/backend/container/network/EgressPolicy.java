package io.agentenv.backend.container.network;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One sandbox's outbound rules on top of the host-wide ones (sandboxes never reach each other, the host or internal
 * ranges, whatever this says; DNS to the host's resolvers always works): {@code allow} entries are always reachable,
 * {@code deny} entries never (allow wins), everything else follows {@code otherwise}.
 * Entries are IPv4 addresses or CIDR blocks, stored in canonical form; IPv6 entries are refused, since sandboxes have
 * no IPv6 route at all.
 */
public record EgressPolicy(Default otherwise, List<String> allow, List<String> deny) {

    /** What happens to traffic no entry matches. */
    public enum Default {
        ALLOW,
        DENY
    }

    static final EgressPolicy OPEN = new EgressPolicy(Default.ALLOW, List.of(), List.of());

    private static final Pattern IPV4 =
            Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})(?:/(\\d{1,2}))?");

    public EgressPolicy {
        requireNonNull(otherwise, "otherwise is null");
        allow = canonical(allow);
        deny = canonical(deny);
    }

    /** True when nothing beyond the host-wide rules applies (no per-sandbox chain is needed). */
    public boolean isOpen() {
        return otherwise == Default.ALLOW && allow.isEmpty() && deny.isEmpty();
    }

    private static List<String> canonical(List<String> entries) {
        requireNonNull(entries, "entries is null");
        List<String> out = new ArrayList<>(entries.size());
        for (String entry : entries) {
            out.add(canonical(requireNonNull(entry, "entry is null").strip()));
        }
        return List.copyOf(out);
    }

    /** {@code a.b.c.d} or {@code a.b.c.d/n}, with the host bits of a block cleared. */
    static String canonical(String entry) {
        Matcher m = IPV4.matcher(entry);
        if (!m.matches()) {
            throw new IllegalArgumentException("not an IPv4 address or CIDR block: '" + entry + "'");
        }
        long address = 0;
        for (int i = 1; i <= 4; i++) {
            int octet = Integer.parseInt(m.group(i));
            if (octet > 255) {
                throw new IllegalArgumentException("not an IPv4 address or CIDR block: '" + entry + "'");
            }
            address = (address << 8) | octet;
        }
        int prefix = m.group(5) == null ? 32 : Integer.parseInt(m.group(5));
        if (prefix > 32) {
            throw new IllegalArgumentException("prefix length above 32: '" + entry + "'");
        }
        long mask = prefix == 0 ? 0 : (0xFFFF_FFFFL << (32 - prefix)) & 0xFFFF_FFFFL;
        address &= mask;
        String dotted = ((address >> 24) & 0xFF) + "." + ((address >> 16) & 0xFF) + "." + ((address >> 8) & 0xFF) + "."
                + (address & 0xFF);
        return prefix == 32 ? dotted : dotted + "/" + prefix;
    }
}
