package io.agentenv.envd.files;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.protocol.rest.EntryInfo;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** One entry of the {@code POST /files} answer: {@code {"path","name","type":"file","metadata"?}}. */
record WrittenFile(Path path, Map<String, String> metadata) {
    WrittenFile {
        requireNonNull(path, "path is null");
        metadata = Map.copyOf(metadata);
    }

    EntryInfo toWire() {
        return new EntryInfo(
                path.toString(),
                path.getFileName() == null ? "/" : path.getFileName().toString(),
                EntryInfo.FILE,
                metadata);
    }

    static List<EntryInfo> toWire(List<WrittenFile> files) {
        return files.stream().map(WrittenFile::toWire).toList();
    }
}
