package io.agentenv.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.orchestrator.GuestDefaults;
import io.agentenv.orchestrator.VolumeAttachment;
import io.agentenv.spi.NetworkPolicy;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** The column encodings: exact instants, and JSON read back in another rendering than the one written. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CodecTest {
    @Test
    void instants_round_trip_to_the_nanosecond_and_saturate_outside_the_long_range() {
        Instant at = Instant.parse("2026-01-01T00:00:00.123456789Z");
        Instant before1970 = Instant.parse("1969-12-31T23:59:59.999999999Z");

        assertThat(Codec.instant(Codec.nanos(at))).isEqualTo(at);
        assertThat(Codec.instant(Codec.nanos(before1970))).isEqualTo(before1970);
        assertThat(Codec.nanos(Instant.parse("+100000-01-01T00:00:00Z"))).isEqualTo(Long.MAX_VALUE);
        assertThat(Codec.nanos(Instant.parse("-100000-01-01T00:00:00Z"))).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void values_decode_from_a_rendering_with_other_spacing_and_key_order() {
        // as PostgreSQL's jsonb prints what Codec wrote: a space after each colon and comma, shorter keys first
        assertThat(Codec.map("{\"b\": \"2\", \"aa\": \"1\"}")).isEqualTo(Map.of("aa", "1", "b", "2"));
        assertThat(Codec.list("[\"v1\", \"latest\"]")).containsExactly("v1", "latest");
        assertThat(Codec.guestDefaults("{\"user\": \"app\", \"workdir\": \"/srv\"}"))
                .isEqualTo(new GuestDefaults(Optional.of("app"), Optional.of("/srv")));
        assertThat(Codec.volumes(
                        "[{\"name\": \"data\", \"path\": \"/data\", \"readOnly\": true, \"volumeId\": \"v1\"}]"))
                .containsExactly(new VolumeAttachment("v1", "data", "/data", true));
        NetworkPolicy policy = new NetworkPolicy(
                NetworkPolicy.InternetAccess.DENIED,
                List.of("10.0.0.0/8"),
                List.of(),
                NetworkPolicy.PublicTraffic.TOKEN_REQUIRED);
        assertThat(Codec.network("{\"denyOut\": [], \"allowOut\": [\"10.0.0.0/8\"], "
                        + "\"publicTraffic\": \"TOKEN_REQUIRED\", \"internetAccess\": \"DENIED\"}"))
                .isEqualTo(policy);
        assertThat(Codec.network(Codec.network(NetworkPolicy.DEFAULT))).isEqualTo(NetworkPolicy.DEFAULT);
    }
}
