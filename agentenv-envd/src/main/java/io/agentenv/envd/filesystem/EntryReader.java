package io.agentenv.envd.filesystem;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.UserPrincipal;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Builds {@link Entry} values from the filesystem, with the same field rules as E2B's envd. Owner and group names are
 * looked up once per id for the reader's lifetime (a name lookup costs more than the stat itself), so use one reader
 * per operation: accounts added later are then seen by the next operation. Not thread-safe.
 */
final class EntryReader {
    private final Map<Integer, String> users = new HashMap<>();
    private final Map<Integer, String> groups = new HashMap<>();

    /**
     * Describes {@code path} without following it if it is a symlink; the entry's {@code path} is {@code path} as given.
     * A symlink reports its final target's type and permission bits, the target's metadata, and the resolved target
     * in {@code symlinkTarget}; a dangling or cyclic one has type {@link FileType#UNSPECIFIED}.
     *
     * @throws IOException when the entry cannot be read ({@link java.nio.file.NoSuchFileException} if it is gone)
     */
    Entry read(Path path) throws IOException {
        Map<String, Object> attributes =
                Files.readAttributes(path, "unix:mode,uid,gid,size,lastModifiedTime", LinkOption.NOFOLLOW_LINKS);
        int rawMode = (Integer) attributes.get("mode");
        FileType type = ModeString.typeOf(rawMode);
        int mode = rawMode & 0777;
        Optional<String> symlinkTarget = Optional.empty();
        Map<String, String> metadata = Map.of();
        if (type == FileType.SYMLINK) {
            Path target = resolve(path);
            symlinkTarget = Optional.of(target.toString());
            try {
                int targetMode = (Integer) Files.getAttribute(target, "unix:mode");
                type = ModeString.typeOf(targetMode);
                mode = targetMode & 0777;
                metadata = type == FileType.UNSPECIFIED ? Map.of() : Metadata.read(target);
            } catch (IOException e) {
                type = FileType.UNSPECIFIED;
                mode = 0;
            }
        } else if (type != FileType.UNSPECIFIED) {
            metadata = Metadata.read(path);
        }
        Path name = path.getFileName();
        return new Entry(
                name == null ? "/" : name.toString(),
                type,
                path.toString(),
                (Long) attributes.get("size"),
                mode,
                ModeString.of(rawMode),
                ownerName(path, (Integer) attributes.get("uid")),
                groupName(path, (Integer) attributes.get("gid")),
                ((FileTime) attributes.get("lastModifiedTime")).toInstant(),
                symlinkTarget,
                metadata);
    }

    private String ownerName(Path path, int uid) throws IOException {
        String name = users.get(uid);
        if (name == null) {
            name = ((UserPrincipal) Files.getAttribute(path, "posix:owner", LinkOption.NOFOLLOW_LINKS)).getName();
            users.put(uid, name);
        }
        return name;
    }

    private String groupName(Path path, int gid) throws IOException {
        String name = groups.get(gid);
        if (name == null) {
            name = ((GroupPrincipal) Files.getAttribute(path, "posix:group", LinkOption.NOFOLLOW_LINKS)).getName();
            groups.put(gid, name);
        }
        return name;
    }

    /** The fully resolved target of a symlink, or the link itself when it dangles or loops (as envd reports it). */
    private static Path resolve(Path link) {
        try {
            return link.toRealPath();
        } catch (IOException e) {
            return link;
        }
    }
}
