package io.agentenv.images;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class OciJsonTest {

    private static final String A = "sha256:" + "a".repeat(64);
    private static final String B = "sha256:" + "b".repeat(64);
    private static final String C = "sha256:" + "c".repeat(64);

    private static byte[] json(String text) {
        return text.replace('\'', '"').getBytes(StandardCharsets.UTF_8);
    }

    private static String entry(String digest, String arch, String variant) {
        return "{'mediaType':'" + OciJson.OCI_MANIFEST + "','digest':'" + digest + "','size':1,'platform':"
                + "{'os':'linux','architecture':'" + arch + "'"
                + (variant.isEmpty() ? "" : ",'variant':'" + variant + "'")
                + "}}";
    }

    @Test
    void an_index_resolves_to_linux_amd64_preferring_no_variant() throws Exception {
        byte[] index = json("{'schemaVersion':2,'mediaType':'" + OciJson.DOCKER_LIST + "','manifests':["
                + entry(A, "arm64", "v8") + "," + entry(B, "amd64", "v3") + "," + entry(C, "amd64", "") + "]}");

        assertThat(OciJson.resolveManifest(index, "sha256:" + "0".repeat(64), "img"))
                .isEqualTo(C);
    }

    @Test
    void an_image_manifest_resolves_to_its_own_digest() throws Exception {
        byte[] manifest = json("{'schemaVersion':2,'config':{},'layers':[]}");

        assertThat(OciJson.resolveManifest(manifest, A, "img")).isEqualTo(A);
    }

    @Test
    void an_index_without_linux_amd64_or_a_schema_1_manifest_is_unsupported() {
        byte[] arm = json("{'schemaVersion':2,'manifests':[" + entry(A, "arm64", "v8") + "]}");

        assertThatThrownBy(() -> OciJson.resolveManifest(arm, B, "img"))
                .isInstanceOf(ImageException.Unsupported.class)
                .hasMessageContaining("linux/arm64/v8");
        assertThatThrownBy(() -> OciJson.resolveManifest(json("{'schemaVersion':1,'fsLayers':[]}"), B, "img"))
                .isInstanceOf(ImageException.Unsupported.class);
        assertThatThrownBy(() -> OciJson.resolveManifest(json("[1]"), B, "img"))
                .isInstanceOf(ImageException.Failed.class);
    }

    @Test
    void an_image_config_gives_its_process_settings_and_checks_the_platform() throws Exception {
        byte[] config = json("{'os':'linux','architecture':'amd64','config':{'Env':['A=1'],'WorkingDir':'',"
                + "'User':'app','Cmd':['bash']}}");

        assertThat(OciJson.imageConfig(config, "img"))
                .isEqualTo(new ImageConfig(
                        List.of("A=1"), Optional.empty(), Optional.of("app"), List.of(), List.of("bash")));
        assertThatThrownBy(() -> OciJson.imageConfig(json("{'os':'windows','architecture':'amd64'}"), "img"))
                .isInstanceOf(ImageException.Unsupported.class)
                .hasMessageContaining("windows/amd64");
    }
}
