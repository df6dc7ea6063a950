package io.agentenv.orchestrator;

import io.agentenv.spi.NetworkPolicy;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.List;

/** Validates the egress entries of a network policy: each is an IPv4/IPv6 address or CIDR block. */
final class NetworkRules {
    static final int MAX_ENTRIES = 256;

    private NetworkRules() {}

    static void validate(NetworkPolicy policy) {
        check("allowOut", policy.allowOut());
        check("denyOut", policy.denyOut());
    }

    private static void check(String field, List<String> entries) {
        if (entries.size() > MAX_ENTRIES) {
            throw AgentEnvException.invalidArgument(field + " has more than " + MAX_ENTRIES + " entries");
        }
        for (String entry : entries) {
            if (!isAddressOrCidr(entry)) {
                throw AgentEnvException.invalidArgument(field + " entry '" + printable(entry)
                        + "' is not an IP address or CIDR block (domain rules are not supported)");
            }
        }
    }

    static boolean isAddressOrCidr(String entry) {
        if (entry == null || entry.isEmpty() || entry.length() > 64) {
            return false;
        }
        int slash = entry.indexOf('/');
        String address = slash < 0 ? entry : entry.substring(0, slash);
        if (address.isEmpty() || !address.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == '.' || c == ':')) {
            return false; // only literals: ofLiteral never resolves names, this also keeps zone ids out
        }
        InetAddress parsed;
        try {
            parsed = InetAddress.ofLiteral(address);
        } catch (IllegalArgumentException e) {
            return false;
        }
        if (slash < 0) {
            return true;
        }
        String prefix = entry.substring(slash + 1);
        if (prefix.isEmpty() || prefix.length() > 3 || !prefix.chars().allMatch(Character::isDigit)) {
            return false;
        }
        int bits = Integer.parseInt(prefix);
        return bits <= (parsed instanceof Inet4Address ? 32 : 128);
    }

    private static String printable(String entry) {
        String shortened = entry.length() > 64 ? entry.substring(0, 64) + "..." : entry;
        return shortened.replaceAll("\\p{Cntrl}", "?");
    }
}
