package io.agentenv.envd.filesystem;

/**
 * Formats a Unix {@code st_mode} the way Go's {@code os.FileMode.String()} does, because E2B's envd (written in Go)
 * puts exactly that string in {@code EntryInfo.permissions}: type letters first ({@code d} directory, {@code L} symlink,
 * {@code D} device, {@code p} pipe, {@code S} socket, {@code u} setuid, {@code g} setgid, {@code c} character device,
 * {@code t} sticky), a single {@code -} when there are none, then nine {@code rwx} characters.
 */
final class ModeString {
    static final int S_IFMT = 0170000;
    static final int S_IFSOCK = 0140000;
    static final int S_IFLNK = 0120000;
    static final int S_IFREG = 0100000;
    static final int S_IFBLK = 0060000;
    static final int S_IFDIR = 0040000;
    static final int S_IFCHR = 0020000;
    static final int S_IFIFO = 0010000;
    private static final int S_ISUID = 04000;
    private static final int S_ISGID = 02000;
    private static final int S_ISVTX = 01000;

    private ModeString() {}

    static String of(int mode) {
        StringBuilder out = new StringBuilder(14);
        int format = mode & S_IFMT;
        if (format == S_IFDIR) {
            out.append('d');
        }
        if (format == S_IFLNK) {
            out.append('L');
        }
        if (format == S_IFBLK || format == S_IFCHR) {
            out.append('D');
        }
        if (format == S_IFIFO) {
            out.append('p');
        }
        if (format == S_IFSOCK) {
            out.append('S');
        }
        if ((mode & S_ISUID) != 0) {
            out.append('u');
        }
        if ((mode & S_ISGID) != 0) {
            out.append('g');
        }
        if (format == S_IFCHR) {
            out.append('c');
        }
        if ((mode & S_ISVTX) != 0) {
            out.append('t');
        }
        if (out.isEmpty()) {
            out.append('-');
        }
        String rwx = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) {
            out.append((mode & (1 << (8 - i))) != 0 ? rwx.charAt(i) : '-');
        }
        return out.toString();
    }

    static FileType typeOf(int mode) {
        return switch (mode & S_IFMT) {
            case S_IFREG -> FileType.FILE;
            case S_IFDIR -> FileType.DIRECTORY;
            case S_IFLNK -> FileType.SYMLINK;
            default -> FileType.UNSPECIFIED;
        };
    }
}
