package io.agentenv.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;

/**
 * The files of a COPY step as the E2B SDK sends them: the step's {@code filesHash} (SHA-256 over {@code "COPY src
 * dest"}, then per file in path order its path relative to the context, its mode and size as decimal numbers and its
 * content, or a symbolic link's target) and the gzipped tar of the same files (paths relative to the context, a
 * directory's entry before its contents, links kept as links). {@code src} is a path or glob in the context; a
 * directory brings everything under it. Paths that match a pattern of the context's {@code .dockerignore} are left out
 * (patterns are globs on the relative path, as the SDK applies them: {@code dir/**} leaves out what is under dir).
 */
final class TemplateFiles {
    /** One file: its path, its path relative to the context ("/"-separated; "" for the context itself). */
    record Entry(Path path, String relative) {}

    private TemplateFiles() {}

    /** The files {@code src} names in {@code context}, in the SDK's order; IllegalArgumentException when none. */
    static List<Entry> files(Path context, String src) throws IOException {
        Path root = context.toAbsolutePath().normalize();
        List<PathMatcher> ignored = ignorePatterns(root);
        Map<String, Entry> found = new LinkedHashMap<>();
        String pattern = src.startsWith("./") ? src.substring(2) : src;
        List<Path> matches = new ArrayList<>();
        if (pattern.matches(".*[*?\\[{].*")) {
            PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + pattern);
            try (Stream<Path> all = Files.walk(root)) {
                all.filter(p -> !p.equals(root))
                        .filter(p -> matcher.matches(root.relativize(p)))
                        .forEach(matches::add);
            }
        } else {
            Path path = root.resolve(pattern).normalize();
            if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                matches.add(path);
            }
        }
        for (Path match : matches) {
            if (!match.startsWith(root)) {
                throw new IllegalArgumentException("COPY " + src + ": the source is outside the context directory");
            }
            add(found, root, match, ignored);
            if (Files.isDirectory(match, LinkOption.NOFOLLOW_LINKS)) {
                try (Stream<Path> under = Files.walk(match)) {
                    under.filter(p -> !p.equals(match)).forEach(p -> add(found, root, p, ignored));
                }
            }
        }
        if (found.isEmpty()) {
            throw new IllegalArgumentException("COPY " + src + ": no files found in " + root.resolve(pattern));
        }
        List<Entry> sorted = new ArrayList<>(found.values());
        sorted.sort(Comparator.comparing(e -> e.path().toString()));
        return sorted;
    }

    private static void add(Map<String, Entry> found, Path root, Path path, List<PathMatcher> ignored) {
        Path relative = root.relativize(path);
        if (ignored.stream().anyMatch(m -> m.matches(relative))) {
            return;
        }
        String posix = relative.toString().replace('\\', '/');
        found.putIfAbsent(path.toString(), new Entry(path, posix));
    }

    private static List<PathMatcher> ignorePatterns(Path root) throws IOException {
        Path file = root.resolve(".dockerignore");
        List<PathMatcher> matchers = new ArrayList<>();
        if (!Files.isRegularFile(file)) {
            return matchers;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String pattern = line.strip();
            if (pattern.isEmpty() || pattern.startsWith("#")) {
                continue;
            }
            pattern = pattern.startsWith("/") ? pattern.substring(1) : pattern;
            pattern = pattern.startsWith("./") ? pattern.substring(2) : pattern;
            matchers.add(FileSystems.getDefault().getPathMatcher("glob:" + pattern));
        }
        return matchers;
    }

    /** The step's {@code filesHash}, as the SDK computes it (links are not followed). */
    static String hash(String src, String dest, List<Entry> files) throws IOException {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        sha.update(("COPY " + src + " " + dest).getBytes(StandardCharsets.UTF_8));
        byte[] buffer = new byte[64 * 1024];
        for (Entry file : files) {
            sha.update(file.relative().getBytes(StandardCharsets.UTF_8));
            int mode = (Integer) Files.getAttribute(file.path(), "unix:mode", LinkOption.NOFOLLOW_LINKS);
            long size = Files.size(file.path());
            if (Files.isSymbolicLink(file.path())) {
                size = (Long) Files.getAttribute(file.path(), "unix:size", LinkOption.NOFOLLOW_LINKS);
            }
            sha.update(Integer.toString(mode).getBytes(StandardCharsets.UTF_8));
            sha.update(Long.toString(size).getBytes(StandardCharsets.UTF_8));
            if (Files.isSymbolicLink(file.path())) {
                sha.update(Files.readSymbolicLink(file.path()).toString().getBytes(StandardCharsets.UTF_8));
            } else if (Files.isRegularFile(file.path(), LinkOption.NOFOLLOW_LINKS)) {
                try (InputStream in = Files.newInputStream(file.path())) {
                    int n;
                    while ((n = in.read(buffer)) > 0) {
                        sha.update(buffer, 0, n);
                    }
                }
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    /** Writes the files as a gzipped tar to {@code target} (the context itself has no entry). */
    static void writeTarGz(List<Entry> files, Path target) throws IOException {
        try (OutputStream out =
                new GZIPOutputStream(new BufferedOutputStream(Files.newOutputStream(target)), 64 * 1024)) {
            for (Entry file : files) {
                if (!file.relative().isEmpty()) {
                    entry(out, file);
                }
            }
            out.write(new byte[1024]); // two zero blocks end the archive
        }
    }

    private static void entry(OutputStream out, Entry file) throws IOException {
        PosixFileAttributes attrs =
                Files.readAttributes(file.path(), PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) Files.getAttribute(file.path(), "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
        long mtime = attrs.lastModifiedTime().toMillis() / 1000;
        if (attrs.isSymbolicLink()) {
            String target = Files.readSymbolicLink(file.path()).toString();
            header(out, file.relative(), mode, 0, mtime, '2', target);
        } else if (attrs.isDirectory()) {
            header(out, file.relative() + "/", mode, 0, mtime, '5', "");
        } else if (attrs.isRegularFile()) {
            long size = attrs.size();
            header(out, file.relative(), mode, size, mtime, '0', "");
            long written;
            try (InputStream in = Files.newInputStream(file.path())) {
                written = in.transferTo(out);
            }
            if (written != size) {
                throw new IOException(file.relative() + " changed while it was being archived");
            }
            pad(out, size);
        }
        // sockets, devices and pipes are not archived
    }

    /** A ustar header, preceded by a PAX header when the name or link target does not fit. */
    private static void header(OutputStream out, String name, int mode, long size, long mtime, char type, String link)
            throws IOException {
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        byte[] linkBytes = link.getBytes(StandardCharsets.UTF_8);
        if (nameBytes.length > 100 || linkBytes.length > 100) {
            StringBuilder pax = new StringBuilder();
            if (nameBytes.length > 100) {
                pax.append(paxRecord("path", name));
            }
            if (linkBytes.length > 100) {
                pax.append(paxRecord("linkpath", link));
            }
            byte[] body = pax.toString().getBytes(StandardCharsets.UTF_8);
            out.write(block("PaxHeader", 0644, body.length, mtime, 'x', ""));
            out.write(body);
            pad(out, body.length);
        }
        out.write(block(name, mode, size, mtime, type, link));
    }

    /** A PAX record: its length (counting itself) in decimal, the key, the value, a newline. */
    private static String paxRecord(String key, String value) {
        int rest = 1 + key.length() + 1 + value.getBytes(StandardCharsets.UTF_8).length + 1;
        int length = rest + Integer.toString(rest).length();
        if (Integer.toString(length).length() != Integer.toString(rest).length()) {
            length++;
        }
        return length + " " + key + "=" + value + "\n";
    }

    private static byte[] block(String name, int mode, long size, long mtime, char type, String link) {
        byte[] h = new byte[512];
        put(h, 0, 100, truncate(name, 100));
        put(h, 100, 8, octal(mode, 7));
        put(h, 108, 8, octal(0, 7));
        put(h, 116, 8, octal(0, 7));
        put(h, 124, 12, octal(size, 11));
        put(h, 136, 12, octal(mtime, 11));
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        h[156] = (byte) type;
        put(h, 157, 100, truncate(link, 100));
        put(h, 257, 6, "ustar\0".getBytes(StandardCharsets.US_ASCII));
        put(h, 263, 2, "00".getBytes(StandardCharsets.US_ASCII));
        put(h, 265, 32, "root".getBytes(StandardCharsets.US_ASCII));
        put(h, 297, 32, "root".getBytes(StandardCharsets.US_ASCII));
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        put(h, 148, 8, (String.format("%06o", sum) + "\0 ").getBytes(StandardCharsets.US_ASCII));
        return h;
    }

    private static byte[] truncate(String text, int max) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return bytes.length <= max ? bytes : java.util.Arrays.copyOf(bytes, max);
    }

    private static byte[] octal(long value, int digits) {
        return (String.format("%0" + digits + "o", value) + "\0").getBytes(StandardCharsets.US_ASCII);
    }

    private static void put(byte[] header, int offset, int length, byte[] value) {
        System.arraycopy(value, 0, header, offset, Math.min(length, value.length));
    }

    private static void pad(OutputStream out, long size) throws IOException {
        int rest = (int) (size % 512);
        if (rest != 0) {
            out.write(new byte[512 - rest]);
        }
    }
}
