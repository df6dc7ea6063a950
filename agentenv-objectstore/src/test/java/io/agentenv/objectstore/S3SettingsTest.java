package io.agentenv.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class S3SettingsTest {

    @Test
    void defaultsAreAwsWithTheDefaultChainAndBoundedTimeouts() {
        S3Settings settings = S3Settings.builder("bucket").build();

        assertThat(settings.region()).isEqualTo("us-east-1");
        assertThat(settings.endpoint()).isEmpty();
        assertThat(settings.credentials()).isEmpty();
        assertThat(settings.pathStyle()).isFalse();
        assertThat(settings.partSize()).isEqualTo(64L << 20);
        assertThat(settings.connectTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(settings.maxAttempts()).isEqualTo(3);
        assertThat(settings.listPageSize()).isEqualTo(1000);
    }

    @Test
    void toBuilderKeepsEverySetting() {
        S3Settings settings = S3Settings.builder("b")
                .keyPrefix("cluster-1/")
                .region("eu-west-1")
                .endpoint(URI.create("http://127.0.0.1:9000"))
                .pathStyle(true)
                .credentials(new S3Credentials("id", "secret"))
                .partSize(8L << 20)
                .connectTimeout(Duration.ofSeconds(1))
                .socketTimeout(Duration.ofSeconds(5))
                .uploadTimeout(Duration.ofMinutes(1))
                .maxAttempts(5)
                .maxConnections(7)
                .listPageSize(100)
                .build();

        assertThat(settings.toBuilder().build()).isEqualTo(settings);
        assertThat(settings.endpoint()).isEqualTo(Optional.of(URI.create("http://127.0.0.1:9000")));
    }

    @Test
    void outOfRangeSettingsAreRefused() {
        assertThatThrownBy(() -> S3Settings.builder(" ").build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> S3Settings.builder("b").partSize(1 << 20).build())
                .hasMessageContaining("partSize");
        assertThatThrownBy(() -> S3Settings.builder("b").keyPrefix("no-slash").build())
                .hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> S3Settings.builder("b").keyPrefix("../").build())
                .hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> S3Settings.builder("b").listPageSize(1001).build())
                .hasMessageContaining("listPageSize");
        assertThatThrownBy(() -> S3Settings.builder("b").maxAttempts(0).build()).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() ->
                        S3Settings.builder("b").socketTimeout(Duration.ZERO).build())
                .hasMessageContaining("timeouts");
    }

    @Test
    void partsGrowWhereTenThousandWouldNotHoldTheObject() throws Exception {
        long part = 64L << 20;

        assertThat(S3ObjectStore.partSize(10L << 30, part)).isEqualTo(part);
        assertThat(S3ObjectStore.partSize(10_000 * part, part)).isEqualTo(part);
        assertThat(S3ObjectStore.partSize(10_000 * part + 1, part)).isEqualTo(65 << 20);
        assertThatThrownBy(() -> S3ObjectStore.partSize(20_000L << 30, part))
                .isInstanceOf(ObjectStoreException.Failed.class);
    }

    @Test
    void credentialsHideTheSecret() {
        assertThat(new S3Credentials("AKIDEXAMPLE", "very-secret").toString())
                .contains("AKIDEXAMPLE")
                .doesNotContain("very-secret");
    }
}
