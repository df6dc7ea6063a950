package io.agentenv.images;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Pulls from a local registry without auth: layers, indexes, zstd, mirrors, the cache and its failures. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ImageStoreHostTest {

    @RegisterExtension
    static final RegistryExtension REGISTRY = new RegistryExtension(RegistryExtension.Auth.NONE);

    private final RecordingRunner tools = new RecordingRunner();
    private final RegistryExtension.Log log = new RegistryExtension.Log();

    private ImageStore store(String name) throws Exception {
        return REGISTRY.store(name, RegistrySettings.defaults(), tools);
    }

    private ImageRef ref(String name) {
        return ImageRef.parse(REGISTRY.host() + "/" + name);
    }

    @Test
    void layers_apply_whiteouts_and_opaque_dirs_and_the_config_comes_back() throws Exception {
        ImageStore store = store("layers");

        PulledImage image = store.pull(ref(TestImages.LAYERS), Optional.empty(), log);

        Path rootfs = image.rootfs();
        assertThat(rootfs)
                .isEqualTo(
                        store.root().resolve("images/" + image.manifestDigest().substring(7) + "/rootfs"));
        assertThat(rootfs.resolve("etc/keep")).hasContent("kept");
        assertThat(rootfs.resolve("etc/gone")).doesNotExist();
        assertThat(rootfs.resolve("data/dir/c")).hasContent("the new content");
        assertThat(rootfs.resolve("data/dir/a")).doesNotExist();
        assertThat(rootfs.resolve("data/dir/sub")).doesNotExist();
        assertThat(rootfs.resolve("bin/busybox")).isRegularFile();
        assertThat(Files.readSymbolicLink(rootfs.resolve("bin/sh"))).isEqualTo(Path.of("busybox"));
        assertThat(image.config())
                .isEqualTo(new ImageConfig(
                        List.of("FOO=bar baz", "PATH=/bin"),
                        Optional.of("/data"),
                        Optional.of("1000:1000"),
                        List.of("/bin/sh"),
                        List.of("-c", "echo hi")));
        assertThat(image.sizeBytes()).isGreaterThan(Files.size(Path.of("/bin/busybox")));
        assertThat(image.manifestDigest()).isEqualTo(OciJson.sha256(rawManifest(TestImages.LAYERS)));
        assertThat(image.ref()).isEqualTo(ref(TestImages.LAYERS));
        assertThat(log.all()).contains("pulled " + ref(TestImages.LAYERS));
    }

    @Test
    void an_index_resolves_to_its_linux_amd64_image() throws Exception {
        JsonNode index = TestImages.manifest(REGISTRY.host(), TestImages.MULTI);
        assertThat(index.path("manifests")).hasSize(2);

        PulledImage image = store("multi").pull(ref(TestImages.MULTI), Optional.empty(), log);

        assertThat(image.rootfs().resolve("platform")).hasContent("amd64");
        assertThat(image.manifestDigest())
                .isEqualTo(index.path("manifests").get(0).path("digest").asText());
    }

    @Test
    void an_image_without_linux_amd64_is_unsupported_and_leaves_nothing() throws Exception {
        ImageStore store = store("arm");

        assertThatThrownBy(() -> store.pull(ref(TestImages.ARM_ONLY), Optional.empty(), log))
                .isInstanceOf(ImageException.Unsupported.class)
                .hasMessageContaining("linux/arm64");
        assertThat(tools.count("skopeo", "copy")).isZero();
        assertEmpty(store);
    }

    @Test
    void a_zstd_layer_is_recompressed_on_copy_and_unpacked() throws Exception {
        JsonNode manifest = TestImages.manifest(REGISTRY.host(), TestImages.ZSTD);
        assertThat(manifest.path("layers").get(0).path("mediaType").asText()).endsWith("+zstd");

        PulledImage image = store("zstd").pull(ref(TestImages.ZSTD), Optional.empty(), log);

        assertThat(image.rootfs().resolve("z/marker")).hasContent("zstd");
    }

    @Test
    void an_unknown_tag_or_repository_is_not_found() throws Exception {
        ImageStore store = store("unknown");

        assertThatThrownBy(() -> store.pull(ref("test/layers:nope"), Optional.empty(), log))
                .isInstanceOf(ImageException.NotFound.class)
                .hasMessageContaining("manifest unknown");
        assertThatThrownBy(() -> store.pull(ref("no/such:1"), Optional.empty(), log))
                .isInstanceOf(ImageException.NotFound.class);
        assertEmpty(store);
    }

    @Test
    void a_closed_port_is_unreachable() throws Exception {
        ImageStore store = store("closed");
        ImageRef closed = ImageRef.parse("127.0.0.1:1/test/layers:1");

        assertThatThrownBy(() -> store.pull(closed, Optional.empty(), log))
                .isInstanceOf(ImageException.Unreachable.class)
                .hasMessageContaining("connection refused");
    }

    @Test
    void docker_hub_names_resolve_through_the_mirror_mapped_to_it() throws Exception {
        RegistrySettings settings = new RegistrySettings(Map.of("docker.io", REGISTRY.host()), Set.of(), Map.of());
        ImageStore store = REGISTRY.store("mirror", settings, tools);

        PulledImage image = store.pull(ImageRef.parse("hubimage:1"), Optional.empty(), log);

        assertThat(image.ref().toString()).isEqualTo("docker.io/library/hubimage:1");
        assertThat(image.rootfs().resolve("etc/keep")).hasContent("kept");
        assertThat(log.all()).contains("through mirror " + REGISTRY.host());
        assertThat(tools.allArguments()).noneMatch(a -> a.contains("docker.io"));
    }

    @Test
    void a_cached_digest_is_pulled_again_without_running_any_tool() throws Exception {
        ImageStore store = store("cache");
        PulledImage first = store.pull(ref(TestImages.LAYERS), Optional.empty(), log);
        tools.clear();

        ImageRef byDigest = ref(TestImages.LAYERS).withDigest(first.manifestDigest());
        PulledImage again = store.pull(byDigest, Optional.empty(), log);

        assertThat(tools.calls()).isEmpty();
        assertThat(again.rootfs()).isEqualTo(first.rootfs());
        assertThat(again.config()).isEqualTo(first.config());

        PulledImage byTag = new ImageStore(store.root(), RegistrySettings.defaults(), tools)
                .pull(ref(TestImages.LAYERS), Optional.empty(), log);

        assertThat(tools.calls()).hasSize(1);
        assertThat(tools.count("skopeo", "inspect")).isEqualTo(1);
        assertThat(byTag.rootfs()).isEqualTo(first.rootfs());
        assertThat(log.all()).contains("cached " + byDigest);
    }

    @Test
    void concurrent_pulls_of_one_image_copy_and_unpack_it_once() throws Exception {
        ImageStore store = store("concurrent");
        int pulls = 4;
        CountDownLatch start = new CountDownLatch(1);
        List<Future<PulledImage>> results = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(pulls)) {
            for (int i = 0; i < pulls; i++) {
                Callable<PulledImage> pull = () -> {
                    start.await();
                    return store.pull(ref(TestImages.LAYERS), Optional.empty(), log);
                };
                results.add(pool.submit(pull));
            }
            start.countDown();
            List<Path> rootfs = new ArrayList<>();
            for (Future<PulledImage> result : results) {
                rootfs.add(result.get().rootfs());
            }
            assertThat(rootfs).containsOnly(rootfs.getFirst());
        }

        assertThat(tools.count("skopeo", "copy")).isEqualTo(1);
        assertThat(tools.count("umoci", "unpack")).isEqualTo(1);
        assertThat(store.list()).hasSize(1);
        assertThat(children(store.root().resolve("tmp"))).isEmpty();
    }

    @Test
    void a_pull_that_fails_midway_leaves_no_directories_or_blobs() throws Exception {
        TestImages.pushUnique(REGISTRY.scratch("broken"), REGISTRY.host(), "test/broken:1");
        JsonNode manifest = TestImages.manifest(REGISTRY.host(), "test/broken:1");
        String layer = manifest.path("layers").get(0).path("digest").asText().substring(7);
        Path blob = REGISTRY.storage()
                .resolve("docker/registry/v2/blobs/sha256/" + layer.substring(0, 2) + "/" + layer + "/data");
        Files.delete(blob);
        ImageStore store = store("broken");

        assertThatThrownBy(() -> store.pull(ref("test/broken:1"), Optional.empty(), log))
                .isInstanceOf(ImageException.NotFound.class)
                .hasMessageContaining("reading blob sha256:" + layer);
        assertThat(tools.count("skopeo", "copy")).isEqualTo(1);
        assertEmpty(store);
    }

    @Test
    void list_and_remove_keep_the_other_images_and_their_blobs() throws Exception {
        ImageStore store = store("remove");
        PulledImage layers = store.pull(ref(TestImages.LAYERS), Optional.empty(), log);
        PulledImage zstd = store.pull(ref(TestImages.ZSTD), Optional.empty(), log);
        assertThat(store.list())
                .extracting(PulledImage::manifestDigest)
                .containsExactlyInAnyOrder(layers.manifestDigest(), zstd.manifestDigest());
        long blobsBefore = children(store.root().resolve("oci/blobs/sha256")).size();

        assertThat(store.remove(layers.manifestDigest())).isTrue();

        assertThat(store.list()).containsExactly(zstd);
        assertThat(layers.rootfs().getParent()).doesNotExist();
        assertThat(zstd.rootfs().resolve("z/marker")).hasContent("zstd");
        assertThat(children(store.root().resolve("oci/blobs/sha256")))
                .hasSizeLessThan((int) blobsBefore)
                .isNotEmpty();
        assertThat(store.remove(layers.manifestDigest())).isFalse();
        PulledImage again = store.pull(ref(TestImages.ZSTD), Optional.empty(), log);
        assertThat(again.rootfs()).isEqualTo(zstd.rootfs());

        assertThat(store.remove(zstd.manifestDigest())).isTrue();
        assertEmpty(store);
    }

    private byte[] rawManifest(String name) throws Exception {
        return TestImages.skopeo("inspect", "--raw", "--tls-verify=false", "docker://" + REGISTRY.host() + "/" + name)
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Nothing cached, staged or named: no image dirs, no temp entries, an empty index and no blobs. */
    private static void assertEmpty(ImageStore store) throws Exception {
        assertThat(children(store.root().resolve("images"))).isEmpty();
        assertThat(children(store.root().resolve("tmp"))).isEmpty();
        assertThat(children(store.root().resolve("oci/blobs/sha256"))).isEmpty();
        JsonNode index =
                OciJson.MAPPER.readTree(store.root().resolve("oci/index.json").toFile());
        assertThat(index.path("manifests")).isEmpty();
    }

    private static List<Path> children(Path dir) throws Exception {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        try (Stream<Path> list = Files.list(dir)) {
            return list.toList();
        }
    }
}
