package io.agentenv.envd.filesystem;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;

/**
 * The identity and last seen state of one watched entry, from which {@link DirectoryWatch} recovers what the JDK's
 * folded event kinds hide: renames (same device and inode) and writes versus attribute changes.
 */
record EntrySnapshot(long device, long inode, FileTime mtime, FileTime ctime, long size, int mode, int uid, int gid) {
    EntrySnapshot {
        requireNonNull(mtime, "mtime is null");
        requireNonNull(ctime, "ctime is null");
    }

    /** The entry's state now (a symlink itself, not its target), or null when it is gone. */
    static EntrySnapshot of(Path path) {
        try {
            Map<String, Object> a = Files.readAttributes(
                    path, "unix:dev,ino,lastModifiedTime,ctime,size,mode,uid,gid", LinkOption.NOFOLLOW_LINKS);
            return new EntrySnapshot(
                    (Long) a.get("dev"),
                    (Long) a.get("ino"),
                    (FileTime) a.get("lastModifiedTime"),
                    (FileTime) a.get("ctime"),
                    (Long) a.get("size"),
                    (Integer) a.get("mode"),
                    (Integer) a.get("uid"),
                    (Integer) a.get("gid"));
        } catch (IOException e) {
            return null;
        }
    }

    boolean directory() {
        return (mode & ModeString.S_IFMT) == ModeString.S_IFDIR;
    }

    Identity id() {
        return new Identity(device, inode);
    }

    /** Which file an entry is, whatever its name. */
    record Identity(long device, long inode) {}

    /**
     * What an {@code ENTRY_MODIFY} (IN_MODIFY or IN_ATTRIB) between two snapshots of one entry stands for; see
     * {@link DirectoryWatch} for the rules. {@code before} is null when the entry was not seen before.
     */
    static List<EventType> classify(EntrySnapshot before, EntrySnapshot now) {
        if (now.directory()) {
            return List.of(EventType.CHMOD);
        }
        boolean metadataOnlyLast = now.ctime().compareTo(now.mtime()) > 0;
        if (before == null) {
            return List.of(metadataOnlyLast ? EventType.CHMOD : EventType.WRITE);
        }
        boolean wrote = !now.mtime().equals(before.mtime()) || now.size() != before.size();
        boolean attributes = now.mode() != before.mode()
                || now.uid() != before.uid()
                || now.gid() != before.gid()
                || (metadataOnlyLast && !now.ctime().equals(before.ctime()));
        if (wrote && attributes) {
            return List.of(EventType.WRITE, EventType.CHMOD);
        }
        if (wrote) {
            return List.of(EventType.WRITE);
        }
        if (attributes) {
            return List.of(EventType.CHMOD);
        }
        return List.of(metadataOnlyLast ? EventType.CHMOD : EventType.WRITE);
    }
}
