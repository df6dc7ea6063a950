package io.agentenv.backend.container;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Reads the mount table of this process's mount namespace (/proc/self/mountinfo). */
final class MountTable {

    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    private MountTable() {
    }

    /**
     * Mount points at or below {@code dir}, deepest first and, at one depth, the latest mounted first (the order to
     * unmount them in: a sandbox's overlay rootfs, mounted after its disk, holds the disk busy until it is gone).
     */
    static List<Path> mountsUnder(Path dir) throws IOException {
        Path root = dir.toAbsolutePath().normalize();
        List<Path> found = new ArrayList<>();
        for (String line : Files.readAllLines(MOUNTINFO)) {
            String[] fields = line.split(" ");
            if (fields.length < 5) {
                continue;
            }
            Path point = Path.of(unescape(fields[4]));
            if (point.startsWith(root)) {
                found.add(point);
            }
        }
        Collections.reverse(found); // mountinfo lists mounts in the order they were made
        found.sort((a, b) -> Integer.compare(b.getNameCount(), a.getNameCount())); // stable: keeps that at one depth
        return List.copyOf(found);
    }

    static boolean isMountPoint(Path dir) throws IOException {
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
