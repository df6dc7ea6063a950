package io.agentenv.images;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How registries are reached, set by the operator.
 *
 * @param mirrors registry host → the host[:port] pulled from instead ({@code docker.io → mirror.internal:5000}): a
 *     mapped registry is never contacted itself
 * @param insecure registry hosts (as written in references or mirrors, with their port) reached over plain HTTP or
 *     HTTPS without certificate checks; loopback registries ({@code localhost}, {@code 127.0.0.0/8},
 *     {@code [::1]}) always are, as Docker does
 * @param credentials default credentials per registry host (the host contacted, so a mirror's), used when a pull
 *     brings none
 */
public record RegistrySettings(
        Map<String, String> mirrors, Set<String> insecure, Map<String, RegistryAuth> credentials) {

    private static final Pattern IPV4_LOOPBACK = Pattern.compile("127(?:\\.(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)){3}");

    public RegistrySettings {
        mirrors = Map.copyOf(lowerKeys(Objects.requireNonNull(mirrors, "mirrors")));
        Set<String> hosts = new LinkedHashSet<>();
        for (String host : Objects.requireNonNull(insecure, "insecure")) {
            hosts.add(host.toLowerCase(Locale.ROOT));
        }
        insecure = Set.copyOf(hosts);
        credentials = Map.copyOf(lowerKeys(Objects.requireNonNull(credentials, "credentials")));
        for (Map.Entry<String, String> mirror : mirrors.entrySet()) {
            // a mirror is a registry host itself: the same validation as in a reference
            new ImageRef(mirror.getValue(), "x", Optional.of("t"), Optional.empty());
            new ImageRef(mirror.getKey(), "x", Optional.of("t"), Optional.empty());
        }
    }

    /** No mirrors, no insecure registries beyond loopback, no default credentials. */
    public static RegistrySettings defaults() {
        return new RegistrySettings(Map.of(), Set.of(), Map.of());
    }

    /**
     * Settings from their text form, as configuration keys hold them: {@code mirrors} is a comma-separated list of
     * {@code registry=mirror} pairs ({@code docker.io=mirror.internal:5000}), {@code insecure} a comma-separated list
     * of hosts; blank means none.
     *
     * @throws IllegalArgumentException on a malformed entry
     */
    public static RegistrySettings parse(String mirrors, String insecure) {
        Map<String, String> mirrorMap = new LinkedHashMap<>();
        for (String pair : mirrors.split(",")) {
            if (pair.isBlank()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0 || eq == pair.length() - 1) {
                throw new IllegalArgumentException("registry mirror '" + pair.strip() + "': registry=mirror expected");
            }
            mirrorMap.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
        }
        Set<String> hosts = new LinkedHashSet<>();
        for (String host : insecure.split(",")) {
            if (!host.isBlank()) {
                hosts.add(host.strip());
            }
        }
        return new RegistrySettings(mirrorMap, hosts, Map.of());
    }

    /** These settings with default credentials for {@code host} added. */
    public RegistrySettings withCredentials(String host, RegistryAuth auth) {
        Map<String, RegistryAuth> all = new LinkedHashMap<>(credentials);
        all.put(host.toLowerCase(Locale.ROOT), auth);
        return new RegistrySettings(mirrors, insecure, all);
    }

    /** The host a reference's registry is pulled from: its mirror, or itself. */
    public String endpoint(String registry) {
        return mirrors.getOrDefault(registry.toLowerCase(Locale.ROOT), registry);
    }

    /** Whether {@code host} may be reached over plain HTTP (and HTTPS without certificate checks). */
    public boolean plainHttpAllowed(String host) {
        return isLoopback(host) || insecure.contains(host.toLowerCase(Locale.ROOT));
    }

    /** The default credentials for the host contacted, if any. */
    public Optional<RegistryAuth> credentialsFor(String host) {
        return Optional.ofNullable(credentials.get(host.toLowerCase(Locale.ROOT)));
    }

    /** {@code localhost}, {@code 127.0.0.0/8} or {@code [::1]}, with or without a port; no name is resolved. */
    static boolean isLoopback(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            return end > 0 && h.substring(1, end).equals("::1");
        }
        int colon = h.indexOf(':');
        String name = colon >= 0 ? h.substring(0, colon) : h;
        return name.equals("localhost") || IPV4_LOOPBACK.matcher(name).matches();
    }

    private static <V> Map<String, V> lowerKeys(Map<String, V> map) {
        Map<String, V> lower = new LinkedHashMap<>();
        map.forEach((k, v) -> lower.put(k.toLowerCase(Locale.ROOT), Objects.requireNonNull(v, k)));
        return lower;
    }

    @Override
    public String toString() {
        return "RegistrySettings[mirrors=" + mirrors + ", insecure=" + insecure + ", credentials for "
                + credentials.keySet() + "]";
    }
}
