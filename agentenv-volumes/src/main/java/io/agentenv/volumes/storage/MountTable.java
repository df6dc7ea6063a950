package io.agentenv.volumes.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads {@code /proc/self/mountinfo}: whether a directory is a mount point. */
final class MountTable {
    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    private MountTable() {}

    static boolean isMountPoint(Path dir) throws IOException {
        String wanted = dir.toAbsolutePath().normalize().toString();
        for (String line : Files.readAllLines(MOUNTINFO)) {
            String[] fields = line.split(" ");
            if (fields.length > 4 && unescape(fields[4]).equals(wanted)) {
                return true;
            }
        }
        return false;
    }

    /** mountinfo writes space, tab, newline and backslash in paths as 3-digit octal escapes. */
    static String unescape(String field) {
        StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 3 < field.length()) {
                String octal = field.substring(i + 1, i + 4);
                if (octal.chars().allMatch(d -> d >= '0' && d <= '7')) {
                    out.append((char) Integer.parseInt(octal, 8));
                    i += 3;
                    continue;
                }
            }
            out.append(c);
        }
        return out.toString();
    }
}
