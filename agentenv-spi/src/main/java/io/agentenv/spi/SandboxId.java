package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.security.SecureRandom;
import java.util.regex.Pattern;

/**
 * A sandbox id: 20 lowercase ASCII letters and digits, so host routing of the form {@code <port>-<id>.<domain>} parses
 * (no '-' or '.').
 */
public record SandboxId(String value) {
    public static final int LENGTH = 20;
    private static final Pattern FORMAT = Pattern.compile("[a-z0-9]{" + LENGTH + "}");
    private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

    public SandboxId {
        requireNonNull(value, "value is null");
        if (!FORMAT.matcher(value).matches()) {
            throw new IllegalArgumentException("sandbox id must be " + LENGTH + " lowercase letters or digits");
        }
    }

    /** True when {@code text} is a well-formed id; use it to answer "not found" for malformed ids without an exception. */
    public static boolean isValid(String text) {
        return text != null && FORMAT.matcher(text).matches();
    }

    /** A new random id drawn from {@code random} (pass a {@link SecureRandom}). */
    public static SandboxId random(SecureRandom random) {
        requireNonNull(random, "random is null");
        char[] chars = new char[LENGTH];
        for (int i = 0; i < LENGTH; i++) {
            chars[i] = ALPHABET[random.nextInt(ALPHABET.length)];
        }
        return new SandboxId(new String(chars));
    }

    @Override
    public String toString() {
        return value;
    }
}
