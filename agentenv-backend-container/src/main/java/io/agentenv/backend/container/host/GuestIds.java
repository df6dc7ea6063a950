package io.agentenv.backend.container.host;

/**
 * The host ids a sandbox's user namespace maps its ids 0 to {@code size - 1} onto: root inside is {@code hostStart}
 * outside, an unprivileged id, and so is every other id.
 */
public record GuestIds(int hostStart, int size) {
    public GuestIds {
        if (hostStart < 1 || size < 1 || (long) hostStart + size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("bad id range: " + hostStart + "+" + size);
        }
    }

    /** The host id of {@code guestId}. */
    public int host(int guestId) {
        if (guestId < 0 || guestId >= size) {
            throw new IllegalArgumentException("id " + guestId + " is not mapped");
        }
        return hostStart + guestId;
    }
}
