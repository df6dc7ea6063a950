package io.agentenv.volumes;

/**
 * The operator's volume settings.
 *
 * @param defaultSizeMiB the size of a volume created without one
 * @param maxSizeMiB     the largest size a volume may have
 * @param guestIdStart   the host id that uid and gid 0 of a sandbox map to (guest id {@code u} is host id
 *                       {@code guestIdStart + u}); ids in the content API are guest ids
 */
public record VolumeSettings(int defaultSizeMiB, int maxSizeMiB, int guestIdStart) {
    /** Where sandboxes' ids start on the host unless the backend is told otherwise ({@code guest_id_start}). */
    public static final int DEFAULT_GUEST_ID_START = 1_000_000_000;
    /** The guest default user's uid and gid ({@code user}); it owns a volume's root and the files written to it. */
    public static final int GUEST_DEFAULT_USER = 1000;

    public VolumeSettings {
        if (defaultSizeMiB < 1 || maxSizeMiB < 1) {
            throw new IllegalArgumentException("volume sizes must be >= 1 MiB");
        }
        if (defaultSizeMiB > maxSizeMiB) {
            throw new IllegalArgumentException(
                    "the default volume size (" + defaultSizeMiB + " MiB) is above the maximum (" + maxSizeMiB + ")");
        }
        if (guestIdStart < 0) {
            throw new IllegalArgumentException("guestIdStart must be >= 0");
        }
    }

    public static VolumeSettings defaults() {
        return new VolumeSettings(1024, 10240, DEFAULT_GUEST_ID_START);
    }

    /** The host uid (and gid) of the guest default user. */
    public int ownerHostId() {
        return guestIdStart + GUEST_DEFAULT_USER;
    }
}
