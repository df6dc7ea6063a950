package io.agentenv.objectstore;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** Compares two directory trees entry by entry: type, permission bits, owners, content, link targets, mtimes. */
final class TreeAssertions {
    private TreeAssertions() {}

    static void assertSameTree(Path expected, Path actual) throws IOException {
        Map<String, String> want = describe(expected);
        Map<String, String> got = describe(actual);
        assertThat(got).containsExactlyEntriesOf(want);
    }

    /** Each entry (relative path, the root as "") described as one line. */
    private static Map<String, String> describe(Path root) throws IOException {
        Map<String, String> entries = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) { // links are not followed
            for (Path path : walk.toList()) {
                Map<String, Object> attrs =
                        Files.readAttributes(path, "unix:mode,uid,gid,lastModifiedTime", NOFOLLOW_LINKS);
                int mode = (Integer) attrs.get("mode");
                String what;
                if (Files.isSymbolicLink(path)) {
                    what = "link -> " + Files.readSymbolicLink(path);
                } else if (Files.isDirectory(path, NOFOLLOW_LINKS)) {
                    what = "dir " + Integer.toOctalString(mode & 07777);
                } else {
                    what = "file " + Integer.toOctalString(mode & 07777) + " sha256 " + TestContent.sha256(path)
                            + " mtime "
                            + ((java.nio.file.attribute.FileTime) attrs.get("lastModifiedTime"))
                                    .toInstant()
                                    .getEpochSecond();
                }
                entries.put(
                        root.relativize(path).toString(), what + " owner " + attrs.get("uid") + ":" + attrs.get("gid"));
            }
        }
        return entries;
    }
}
