package io.agentenv.envd.filesystem;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * One change seen by a {@link DirectoryWatch}.
 *
 * @param name the entry's path relative to the watched directory, e.g. {@code sub/file.txt}
 * @param entry the entry as it is now, only for CREATE, WRITE and CHMOD when requested and it still exists
 */
public record FsEvent(String name, EventType type, Optional<Entry> entry) {
    public FsEvent {
        requireNonNull(name, "name is null");
        requireNonNull(type, "type is null");
        requireNonNull(entry, "entry is null");
    }
}
