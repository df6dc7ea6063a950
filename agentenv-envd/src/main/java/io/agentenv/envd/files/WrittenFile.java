package io.agentenv.envd.files;

import static java.util.Objects.requireNonNull;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** One entry of the {@code POST /files} answer: {@code {"path","name","type":"file","metadata"?}}. */
record WrittenFile(Path path, Map<String, String> metadata) {
    WrittenFile {
        requireNonNull(path, "path is null");
        metadata = Map.copyOf(metadata);
    }

    JsonObject toJson() {
        JsonObject out = new JsonObject();
        out.addProperty("path", path.toString());
        out.addProperty("name", path.getFileName() == null ? "/" : path.getFileName().toString());
        out.addProperty("type", "file");
        if (!metadata.isEmpty()) {
            JsonObject values = new JsonObject();
            new TreeMap<>(metadata).forEach(values::addProperty);
            out.add("metadata", values);
        }
        return out;
    }

    static JsonArray toJson(List<WrittenFile> files) {
        JsonArray out = new JsonArray();
        files.forEach(f -> out.add(f.toJson()));
        return out;
    }
}
