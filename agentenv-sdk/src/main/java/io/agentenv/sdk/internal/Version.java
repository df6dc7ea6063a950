package io.agentenv.sdk.internal;

/** Versions this SDK reports and compares. Internal; not part of the API. */
public final class Version {
    /** This SDK's version (sent in {@code User-Agent}). */
    public static final String SDK = "0.1.0";

    private Version() {}

    /** Compares dotted versions ({@code 0.6.13}, {@code v0.6}); non-numeric parts count as 0. */
    public static int compare(String a, String b) {
        String[] x = strip(a).split("[.-]");
        String[] y = strip(b).split("[.-]");
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            int c = Integer.compare(part(x, i), part(y, i));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private static String strip(String v) {
        return v.startsWith("v") ? v.substring(1) : v;
    }

    private static int part(String[] parts, int i) {
        if (i >= parts.length) {
            return 0;
        }
        try {
            return Integer.parseInt(parts[i]);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
