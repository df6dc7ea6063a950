package io.agentenv.images;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The OCI and Docker JSON documents this module reads: manifests and indexes as registries serve them (from
 * {@code skopeo inspect --raw}), image configs, and an OCI layout's {@code index.json}.
 */
final class OciJson {

    static final ObjectMapper MAPPER = new ObjectMapper();

    static final String OCI_INDEX = "application/vnd.oci.image.index.v1+json";
    static final String DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";
    static final String OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
    static final String DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
    static final String REF_NAME = "org.opencontainers.image.ref.name";

    static final String OS = "linux";
    static final String ARCHITECTURE = "amd64";

    private OciJson() {}

    /** {@code sha256:<hex>} of {@code bytes}: a manifest's digest is that of the bytes the registry served. */
    static String sha256(byte[] bytes) {
        try {
            return "sha256:"
                    + HexFormat.of()
                            .formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    static JsonNode parse(byte[] json, String what) throws ImageException {
        try {
            JsonNode node = MAPPER.readTree(json);
            if (node == null || !node.isObject()) {
                throw new ImageException.Failed(what + " is not a JSON object");
            }
            return node;
        } catch (IOException e) {
            throw new ImageException.Failed(what + " is not valid JSON: " + e.getMessage(), e);
        }
    }

    /**
     * The digest of the linux/amd64 image manifest a registry's answer names: itself for an image manifest, the
     * matching entry for an index or manifest list (an entry without a variant preferred).
     *
     * @throws ImageException.Unsupported without a linux/amd64 entry, for a schema 1 manifest or a nested index
     */
    static String resolveManifest(byte[] raw, String rawDigest, String image) throws ImageException {
        JsonNode root = parse(raw, "the manifest of " + image);
        if (root.path("schemaVersion").asInt() == 1) {
            throw new ImageException.Unsupported(image + ": Docker schema 1 manifests are not supported");
        }
        if (!isIndex(root)) {
            if (!root.has("layers") || !root.has("config")) {
                throw new ImageException.Unsupported(image + ": unsupported manifest type "
                        + root.path("mediaType").asText("(none)"));
            }
            return rawDigest;
        }
        JsonNode match = null;
        List<String> platforms = new ArrayList<>();
        for (JsonNode entry : root.path("manifests")) {
            JsonNode platform = entry.path("platform");
            String os = platform.path("os").asText("");
            String arch = platform.path("architecture").asText("");
            String variant = platform.path("variant").asText("");
            platforms.add(os + "/" + arch + (variant.isEmpty() ? "" : "/" + variant));
            if (OS.equals(os) && ARCHITECTURE.equals(arch) && (match == null || variant.isEmpty())) {
                if (match == null
                        || !match.path("platform").path("variant").asText("").isEmpty()) {
                    match = entry;
                }
            }
        }
        if (match == null) {
            throw new ImageException.Unsupported(image + " has no " + OS + "/" + ARCHITECTURE + " image (it has: "
                    + String.join(", ", platforms) + ")");
        }
        String type = match.path("mediaType").asText("");
        if (type.equals(OCI_INDEX) || type.equals(DOCKER_LIST)) {
            throw new ImageException.Unsupported(image + ": an index nested in an index is not supported");
        }
        String digest = match.path("digest").asText("");
        if (!digest.matches("sha256:[0-9a-f]{64}")) {
            throw new ImageException.Unsupported(image + ": unsupported manifest digest '" + digest + "'");
        }
        return digest;
    }

    private static boolean isIndex(JsonNode root) {
        String type = root.path("mediaType").asText("");
        return type.equals(OCI_INDEX) || type.equals(DOCKER_LIST) || (type.isEmpty() && root.has("manifests"));
    }

    /**
     * The process settings of an image config, after checking it is a linux/amd64 image.
     *
     * @throws ImageException.Unsupported for another platform
     */
    static ImageConfig imageConfig(byte[] raw, String image) throws ImageException {
        JsonNode root = parse(raw, "the image config of " + image);
        String os = root.path("os").asText("");
        String arch = root.path("architecture").asText("");
        if (!OS.equals(os) || !ARCHITECTURE.equals(arch)) {
            throw new ImageException.Unsupported(
                    image + " is a " + os + "/" + arch + " image; only " + OS + "/" + ARCHITECTURE + " runs here");
        }
        JsonNode config = root.path("config");
        return new ImageConfig(
                strings(config.path("Env")),
                text(config.path("WorkingDir")),
                text(config.path("User")),
                strings(config.path("Entrypoint")),
                strings(config.path("Cmd")));
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        for (JsonNode item : array) {
            out.add(item.asText());
        }
        return out;
    }

    private static Optional<String> text(JsonNode node) {
        String value = node.asText("");
        return value.isEmpty() ? Optional.empty() : Optional.of(value);
    }

    /** The one manifest descriptor of a layout skopeo just wrote (its {@code index.json}). */
    static ObjectNode onlyManifest(Path layout) throws IOException {
        JsonNode index = MAPPER.readTree(layout.resolve("index.json").toFile());
        JsonNode manifests = index.path("manifests");
        if (manifests.size() != 1 || !manifests.get(0).isObject()) {
            throw new IOException("expected one manifest in " + layout + "/index.json, found " + manifests.size());
        }
        return (ObjectNode) manifests.get(0).deepCopy();
    }

    /** Replaces the entry named {@code refName} in a layout's {@code index.json} (or removes it: null descriptor). */
    static boolean putRef(Path layout, String refName, ObjectNode descriptor) throws IOException {
        Path file = layout.resolve("index.json");
        ObjectNode index = (ObjectNode) MAPPER.readTree(file.toFile());
        ArrayNode kept = MAPPER.createArrayNode();
        boolean found = false;
        for (JsonNode entry : index.path("manifests")) {
            if (refName.equals(entry.path("annotations").path(REF_NAME).asText())) {
                found = true;
            } else {
                kept.add(entry);
            }
        }
        if (descriptor != null) {
            ObjectNode entry = descriptor.deepCopy();
            entry.putObject("annotations").put(REF_NAME, refName);
            kept.add(entry);
        }
        index.set("manifests", kept);
        writeAtomically(file, MAPPER.writeValueAsBytes(index));
        return found;
    }

    /** Writes an empty OCI layout ({@code oci-layout}, {@code index.json}, {@code blobs/sha256}) unless one is there. */
    static void initLayout(Path layout) throws IOException {
        Files.createDirectories(layout.resolve("blobs/sha256"));
        if (!Files.exists(layout.resolve("oci-layout"))) {
            writeAtomically(
                    layout.resolve("oci-layout"),
                    "{\"imageLayoutVersion\":\"1.0.0\"}".getBytes(StandardCharsets.UTF_8));
        }
        if (!Files.exists(layout.resolve("index.json"))) {
            writeAtomically(
                    layout.resolve("index.json"),
                    "{\"schemaVersion\":2,\"manifests\":[]}".getBytes(StandardCharsets.UTF_8));
        }
    }

    static void writeAtomically(Path file, byte[] bytes) throws IOException {
        Path temp = file.resolveSibling("." + file.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            Files.write(temp, bytes);
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(temp);
        }
    }
}
