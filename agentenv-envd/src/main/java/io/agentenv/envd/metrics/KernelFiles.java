package io.agentenv.envd.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Parsers for the small text files of procfs and cgroupfs; a missing file reads as empty. */
final class KernelFiles {
    private KernelFiles() {}

    /** A single-number file such as {@code memory.max}; empty for "max" or when missing. */
    static Optional<Long> number(Path file) throws IOException {
        try {
            String text = Files.readString(file).trim();
            return text.equals("max") ? Optional.empty() : Optional.of(Long.parseLong(text));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (NumberFormatException e) {
            throw new IOException("unexpected content in " + file, e);
        }
    }

    /** Lines like {@code key value [unit]} or {@code Key: value kB} as key to number; non-numeric lines are skipped. */
    static Map<String, Long> keyValues(Path file) throws IOException {
        Map<String, Long> out = new HashMap<>();
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (NoSuchFileException e) {
            return out;
        }
        for (String line : lines) {
            String[] f = line.trim().split("[:\\s]+");
            if (f.length >= 2) {
                try {
                    out.put(f[0], Long.parseLong(f[1]));
                } catch (NumberFormatException e) {
                    // not a numeric line
                }
            }
        }
        return out;
    }
}
