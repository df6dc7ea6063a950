package io.agentenv.sdk.files;

import java.util.Objects;
import java.util.Optional;

/**
 * One change in a watched directory.
 *
 * @param name  the entry's path relative to the watched directory (e.g. {@code sub/file.txt})
 * @param type  what happened
 * @param entry the entry after the change, when asked for with {@link WatchOptions#includeEntry()} (create, write
 *              and chmod events)
 */
public record FilesystemEvent(String name, FilesystemEventType type, Optional<EntryInfo> entry) {
    /** Checks the fields. */
    public FilesystemEvent {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(entry, "entry");
    }
}
