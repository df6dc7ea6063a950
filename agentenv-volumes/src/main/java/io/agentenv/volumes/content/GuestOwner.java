package io.agentenv.volumes.content;

/**
 * How ids cross between the content API (guest ids, as a sandbox sees them) and the volume's files (host ids): guest
 * id {@code u} is host id {@code hostStart + u} for {@code u} in 0..65535; a host id outside that range shows as 65534
 * (nobody). New entries belong to {@code defaultId}. {@code chown} false keeps the server's own ids (a development
 * host without root), and ids then show as they are.
 */
public record GuestOwner(int hostStart, int defaultId, boolean chown) {
    static final int RANGE = 65536;
    static final int NOBODY = 65534;

    public GuestOwner {
        if (defaultId < 0 || defaultId >= RANGE) {
            throw new IllegalArgumentException("defaultId must be a guest id (0-65535)");
        }
    }

    int toHost(int guestId) {
        if (guestId < 0 || guestId >= RANGE) {
            throw io.agentenv.volumes.VolumeException.invalid("uid and gid must be from 0 to " + (RANGE - 1));
        }
        return hostStart + guestId;
    }

    int toGuest(int hostId) {
        if (!chown) {
            return hostId;
        }
        long guest = (long) hostId - hostStart;
        return guest >= 0 && guest < RANGE ? (int) guest : NOBODY;
    }
}
