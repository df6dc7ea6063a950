package io.agentenv.backend.container.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Reads mount tables: this process's mount namespace's (/proc/self/mountinfo), or any mountinfo text. */
public final class MountTable {

    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    /**
     * One mount of a mountinfo table, its paths unescaped.
     *
     * @param device     the source filesystem ({@code major:minor})
     * @param root       the directory of that filesystem the mount shows (a bind's source, followed through renames)
     * @param mountPoint where it is mounted
     * @param fsType     the filesystem type (after the {@code -} separator)
     */
    public record Entry(String device, String root, String mountPoint, String fsType) {}

    private MountTable() {}

    /** The mounts of the mountinfo file {@code mountinfo} (e.g. {@code /proc/<pid>/mountinfo}), in its order. */
    static List<Entry> read(Path mountinfo) throws IOException {
        return parse(Files.readAllLines(mountinfo));
    }

    /** The mounts of this process's mount namespace, in the order they were made. */
    public static List<Entry> entries() throws IOException {
        return read(MOUNTINFO);
    }

    /** The mounts of mountinfo {@code lines}, in their order (the order they were made); malformed lines are skipped. */
    public static List<Entry> parse(List<String> lines) {
        List<Entry> entries = new ArrayList<>(lines.size());
        for (String line : lines) {
            String[] fields = line.split(" ");
            int separator = List.of(fields).indexOf("-");
            if (fields.length < 5 || separator < 6 || separator + 1 >= fields.length) {
                continue;
            }
            entries.add(new Entry(fields[2], unescape(fields[3]), unescape(fields[4]), fields[separator + 1]));
        }
        return entries;
    }

    /**
     * Mount points at or below {@code dir}, deepest first and, at one depth, the latest mounted first (the order to
     * unmount them in: a sandbox's overlay rootfs, mounted after its disk, holds the disk busy until it is gone).
     */
    public static List<Path> mountsUnder(Path dir) throws IOException {
        Path root = dir.toAbsolutePath().normalize();
        List<Path> found = new ArrayList<>();
        for (Entry entry : read(MOUNTINFO)) {
            Path point = Path.of(entry.mountPoint());
            if (point.startsWith(root)) {
                found.add(point);
            }
        }
        Collections.reverse(found); // mountinfo lists mounts in the order they were made
        found.sort((a, b) -> Integer.compare(b.getNameCount(), a.getNameCount())); // stable: keeps that at one depth
        return List.copyOf(found);
    }

    public static boolean isMountPoint(Path dir) throws IOException {
        Path target = dir.toAbsolutePath().normalize();
        return mountsUnder(target).contains(target);
    }

    /** mountinfo escapes space, tab, newline and backslash as \ooo. */
    static String unescape(String field) {
        if (field.indexOf('\\') < 0) {
            return field;
        }
        StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && isOctal(field, i + 1) && isOctal(field, i + 2) && isOctal(field, i + 3)) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isOctal(String s, int i) {
        return i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '7';
    }
}
