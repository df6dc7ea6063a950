package io.agentenv.images;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

/**
 * Builds the test images with umoci from busybox-static and pushes them with skopeo. Every image carries a random
 * file, so its layers are new to the registry and to skopeo's blob cache.
 */
final class TestImages {

    /** Three layers: a tree with busybox; a whiteout of /etc/gone; an opaque /data/dir with only c in it. */
    static final String LAYERS = "test/layers:1";
    /** An index with a linux/amd64 and a linux/arm64 image, each with /platform naming its architecture. */
    static final String MULTI = "test/multi:1";
    /** One linux/arm64 image. */
    static final String ARM_ONLY = "test/arm:1";
    /** One layer compressed with zstd, holding /z/marker. */
    static final String ZSTD = "test/zstd:1";
    /** The layers image again, where a mirror of Docker Hub keeps it. */
    static final String HUB_COPY = "library/hubimage:1";
    /** The layers image under names the token server treats differently. */
    static final String PUBLIC = "public/app:1";

    static final String PRIVATE = "private/app:1";

    private static final ObjectMapper JSON = new ObjectMapper();

    private TestImages() {}

    /** Builds everything in {@code work} and pushes it to {@code host} (a registry without auth). */
    static void pushAll(Path work, String host) throws Exception {
        Path layout = work.resolve("layout");
        umoci("init", "--layout", layout.toString());

        String layers = layout + ":layers";
        umoci("new", "--image", layers);
        Path base = tree(work.resolve("base"));
        Files.createDirectories(base.resolve("etc"));
        Files.createDirectories(base.resolve("data/dir/sub"));
        Files.writeString(base.resolve("etc/gone"), "deleted by the next layer\n");
        Files.writeString(base.resolve("etc/keep"), "kept\n");
        Files.writeString(base.resolve("data/dir/a"), "hidden by the opaque layer\n");
        Files.writeString(base.resolve("data/dir/sub/b"), "hidden too\n");
        umoci("insert", "--image", layers, base.toString(), "/");
        umoci("insert", "--image", layers, "--whiteout", "/etc/gone");
        Path replacement = Files.createDirectories(work.resolve("replacement"));
        Files.writeString(replacement.resolve("c"), "the new content\n");
        umoci("insert", "--image", layers, "--opaque", replacement.toString(), "/data/dir");
        umoci(
                "config",
                "--image",
                layers,
                "--config.env",
                "FOO=bar baz",
                "--config.env",
                "PATH=/bin",
                "--config.workingdir",
                "/data",
                "--config.user",
                "1000:1000",
                "--config.entrypoint",
                "/bin/sh",
                "--config.cmd",
                "-c",
                "--config.cmd",
                "echo hi");

        String amd = layout + ":amd";
        umoci("new", "--image", amd);
        umoci(
                "insert",
                "--image",
                amd,
                marker(work.resolve("amd"), "platform", "amd64").toString(),
                "/");
        String arm = layout + ":arm";
        umoci("new", "--image", arm);
        umoci(
                "insert",
                "--image",
                arm,
                marker(work.resolve("arm"), "platform", "arm64").toString(),
                "/");
        umoci("config", "--image", arm, "--architecture", "arm64");
        addIndex(layout, "multi", "amd", "arm");

        String zstd = layout + ":zstd";
        umoci("new", "--image", zstd);
        umoci(
                "insert",
                "--image",
                zstd,
                marker(work.resolve("zstdtree"), "marker", "zstd").toString(),
                "/z");
        Path plain = work.resolve("zstd-plain");
        skopeo("copy", "--dest-decompress", "oci:" + zstd, "dir:" + plain);

        push("oci:" + layers, host, LAYERS);
        push("oci:" + layers, host, HUB_COPY);
        push("oci:" + layers, host, PUBLIC);
        push("oci:" + layers, host, PRIVATE);
        skopeo(
                "copy",
                "--all",
                "--dest-tls-verify=false",
                "oci:" + layout + ":multi",
                "docker://" + host + "/" + MULTI);
        push("oci:" + arm, host, ARM_ONLY);
        skopeo(
                "copy",
                "--dest-tls-verify=false",
                "--dest-compress-format",
                "zstd",
                "dir:" + plain,
                "docker://" + host + "/" + ZSTD);
    }

    /** Builds a one-layer image with a random file and pushes it as {@code name}. */
    static void pushUnique(Path work, String host, String name) throws Exception {
        Path layout = work.resolve("unique-" + UUID.randomUUID());
        umoci("init", "--layout", layout.toString());
        umoci("new", "--image", layout + ":u");
        umoci(
                "insert",
                "--image",
                layout + ":u",
                tree(work.resolve("tree-" + UUID.randomUUID())).toString(),
                "/");
        push("oci:" + layout + ":u", host, name);
    }

    /** The manifest the registry serves for {@code name}. */
    static JsonNode manifest(String host, String name) throws Exception {
        return JSON.readTree(skopeo("inspect", "--raw", "--tls-verify=false", "docker://" + host + "/" + name));
    }

    private static void push(String source, String host, String name) throws Exception {
        skopeo("copy", "--dest-tls-verify=false", source, "docker://" + host + "/" + name);
    }

    /** bin/busybox, bin/sh linking to it, and a random file. */
    private static Path tree(Path dir) throws Exception {
        Files.createDirectories(dir.resolve("bin"));
        Files.copy(Path.of("/bin/busybox"), dir.resolve("bin/busybox"));
        Files.createSymbolicLink(dir.resolve("bin/sh"), Path.of("busybox"));
        Files.writeString(dir.resolve("random"), UUID.randomUUID() + "\n");
        return dir;
    }

    private static Path marker(Path dir, String file, String content) throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(file), content + "\n");
        Files.writeString(dir.resolve("random"), UUID.randomUUID() + "\n");
        return dir;
    }

    /** Writes an image index of two tagged images into the layout's blobs and tags it {@code name}. */
    private static void addIndex(Path layout, String name, String amdTag, String armTag) throws Exception {
        ObjectNode layoutIndex =
                (ObjectNode) JSON.readTree(layout.resolve("index.json").toFile());
        ObjectNode index = JSON.createObjectNode().put("schemaVersion", 2).put("mediaType", OciJson.OCI_INDEX);
        ArrayNode manifests = index.putArray("manifests");
        for (String[] entry : List.of(new String[] {amdTag, "amd64"}, new String[] {armTag, "arm64"})) {
            for (JsonNode descriptor : layoutIndex.path("manifests")) {
                if (entry[0].equals(
                        descriptor.path("annotations").path(OciJson.REF_NAME).asText())) {
                    ObjectNode copy = descriptor.deepCopy();
                    copy.remove("annotations");
                    copy.putObject("platform").put("architecture", entry[1]).put("os", "linux");
                    manifests.add(copy);
                }
            }
        }
        byte[] bytes = JSON.writeValueAsBytes(index);
        String digest = OciJson.sha256(bytes);
        Files.write(layout.resolve("blobs/sha256/" + digest.substring("sha256:".length())), bytes);
        ObjectNode descriptor = JSON.createObjectNode()
                .put("mediaType", OciJson.OCI_INDEX)
                .put("digest", digest)
                .put("size", bytes.length);
        descriptor.putObject("annotations").put(OciJson.REF_NAME, name);
        ((ArrayNode) layoutIndex.path("manifests")).add(descriptor);
        Files.write(layout.resolve("index.json"), JSON.writeValueAsBytes(layoutIndex));
    }

    private static String umoci(String... args) throws Exception {
        return Cmd.run(List.of(concat("umoci", args)), "");
    }

    static String skopeo(String... args) throws Exception {
        return Cmd.run(List.of(concat("skopeo", args)), "");
    }

    private static String[] concat(String first, String[] rest) {
        String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    static String text(Path file) throws Exception {
        return Files.readString(file, StandardCharsets.UTF_8).strip();
    }
}
