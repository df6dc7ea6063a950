package io.agentenv.envd.filesystem;

import com.google.protobuf.Timestamp;
import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.FilesystemEvent;
import java.time.Instant;

/** Converts filesystem values to their wire messages. */
final class EntryProtos {
    private EntryProtos() {}

    static EntryInfo toProto(Entry entry) {
        Instant modified = entry.modifiedTime();
        EntryInfo.Builder out = EntryInfo.newBuilder()
                .setName(entry.name())
                .setType(toProto(entry.type()))
                .setPath(entry.path())
                .setSize(entry.size())
                .setMode(entry.mode())
                .setPermissions(entry.permissions())
                .setOwner(entry.owner())
                .setGroup(entry.group())
                .setModifiedTime(Timestamp.newBuilder()
                        .setSeconds(modified.getEpochSecond())
                        .setNanos(modified.getNano()))
                .putAllMetadata(entry.metadata());
        entry.symlinkTarget().ifPresent(out::setSymlinkTarget);
        return out.build();
    }

    static io.agentenv.envd.protocol.filesystem.FileType toProto(FileType type) {
        return switch (type) {
            case UNSPECIFIED -> io.agentenv.envd.protocol.filesystem.FileType.FILE_TYPE_UNSPECIFIED;
            case FILE -> io.agentenv.envd.protocol.filesystem.FileType.FILE_TYPE_FILE;
            case DIRECTORY -> io.agentenv.envd.protocol.filesystem.FileType.FILE_TYPE_DIRECTORY;
            case SYMLINK -> io.agentenv.envd.protocol.filesystem.FileType.FILE_TYPE_SYMLINK;
        };
    }

    static FilesystemEvent toProto(FsEvent event) {
        FilesystemEvent.Builder out = FilesystemEvent.newBuilder()
                .setName(event.name())
                .setType(
                        switch (event.type()) {
                            case CREATE -> io.agentenv.envd.protocol.filesystem.EventType.EVENT_TYPE_CREATE;
                            case WRITE -> io.agentenv.envd.protocol.filesystem.EventType.EVENT_TYPE_WRITE;
                            case REMOVE -> io.agentenv.envd.protocol.filesystem.EventType.EVENT_TYPE_REMOVE;
                            case RENAME -> io.agentenv.envd.protocol.filesystem.EventType.EVENT_TYPE_RENAME;
                            case CHMOD -> io.agentenv.envd.protocol.filesystem.EventType.EVENT_TYPE_CHMOD;
                        });
        event.entry().map(EntryProtos::toProto).ifPresent(out::setEntry);
        return out.build();
    }
}
