package io.agentenv.volumes;

import java.util.regex.Pattern;

/**
 * Volume names: 1 to 63 characters of lowercase letters, digits, {@code -} and {@code _}, starting with a letter or a
 * digit. A name is unique among the volumes of this server.
 */
public final class VolumeNames {
    public static final int MAX_LENGTH = 63;
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0," + (MAX_LENGTH - 1) + "}");

    private VolumeNames() {}

    public static boolean isValid(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    /** The name, or an {@code INVALID_ARGUMENT} that says what a name may be. */
    public static String check(String name) {
        if (!isValid(name)) {
            throw VolumeException.invalid("volume name must be 1-" + MAX_LENGTH
                    + " lowercase letters, digits, '-' or '_', starting with a letter or a digit");
        }
        return name;
    }
}
