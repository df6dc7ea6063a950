package io.agentenv.volumes;

import static java.util.Objects.requireNonNull;

import java.security.SecureRandom;
import java.util.regex.Pattern;

/** Volume ids: 20 random lowercase alphanumerics, as sandbox ids are. Thread-safe. */
public final class VolumeIds {
    static final int LENGTH = 20;
    private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
    private static final Pattern ID = Pattern.compile("[a-z0-9]{" + LENGTH + "}");

    private final SecureRandom random;

    public VolumeIds(SecureRandom random) {
        this.random = requireNonNull(random, "random is null");
    }

    public String next() {
        StringBuilder id = new StringBuilder(LENGTH);
        for (int i = 0; i < LENGTH; i++) {
            id.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
        }
        return id.toString();
    }

    /** Whether {@code id} has the shape of a volume id (checked before it reaches a store or a file path). */
    public static boolean isValid(String id) {
        return id != null && ID.matcher(id).matches();
    }
}
