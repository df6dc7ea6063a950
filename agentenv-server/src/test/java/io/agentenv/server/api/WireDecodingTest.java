package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.Cursor;
import io.agentenv.orchestrator.ErrorKind;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** Pure decoding rules: metadata filter, page tokens, the route table and the state projection. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WireDecodingTest {
    @Test
    void the_metadata_filter_is_unescaped_once_more_then_per_key_and_value() {
        // what the server sees after normal query decoding of ?metadata=a%3Db%252520c (SDK example in the protocol
        // notes)
        assertThat(MetadataFilter.decode("a=b%2520c")).isEqualTo(Map.of("a", "b c"));
        assertThat(MetadataFilter.decode("k%2520x=v%2526w%253Dz&n=1")).isEqualTo(Map.of("k x", "v&w=z", "n", "1"));
        assertThat(MetadataFilter.decode("")).isEmpty();
        assertThatThrownBy(() -> MetadataFilter.decode("novalue")).isInstanceOf(AgentEnvException.class);
        assertThatThrownBy(() -> MetadataFilter.decode("a=%zz")).isInstanceOf(AgentEnvException.class);
    }

    @Test
    void a_page_token_round_trips_and_garbage_is_invalid_argument() {
        Cursor cursor = new Cursor(Instant.parse("2026-11-29T20:00:00.123456789Z"), "abcdefghij0123456789");
        String token = PageToken.encode(cursor);
        assertThat(token).matches("[A-Za-z0-9_-]+");
        assertThat(PageToken.decode(token)).isEqualTo(cursor);
        for (String bad : new String[] {"", "!!", "bm90LWEtdG9rZW4", PageToken.encode(cursor) + "x"}) {
            assertThatThrownBy(() -> PageToken.decode(bad))
                    .isInstanceOfSatisfying(
                            AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        }
    }

    @Test
    void routes_match_by_segments_and_distinguish_unknown_paths_from_wrong_methods() {
        Router router = new Router()
                .add("GET", "/sandboxes/{id}", ex -> Reply.NO_CONTENT)
                .add("DELETE", "/sandboxes/{id}", ex -> Reply.NO_CONTENT);
        assertThat(router.match("GET", "/sandboxes/abc"))
                .isInstanceOfSatisfying(
                        Router.Match.Found.class, f -> assertThat(f.params()).containsEntry("id", "abc"));
        assertThat(router.match("GET", "/sandboxes/abc/")).isInstanceOf(Router.Match.Found.class);
        assertThat(router.match("POST", "/sandboxes/abc"))
                .isInstanceOfSatisfying(
                        Router.Match.WrongMethod.class,
                        w -> assertThat(w.allowed()).containsExactly("DELETE", "GET"));
        assertThat(router.match("GET", "/sandboxes/abc/extra")).isInstanceOf(Router.Match.NotFound.class);
        assertThat(router.match("GET", "/sandboxes/")).isInstanceOf(Router.Match.NotFound.class);
    }

    @Test
    void every_internal_state_projects_onto_running_or_paused() {
        for (io.agentenv.orchestrator.SandboxState s : io.agentenv.orchestrator.SandboxState.values()) {
            assertThat(WireMapping.project(s)).isNotNull();
        }
        assertThat(WireMapping.expand(io.agentenv.api.model.SandboxState.PAUSED))
                .containsExactlyInAnyOrder(
                        io.agentenv.orchestrator.SandboxState.PAUSING, io.agentenv.orchestrator.SandboxState.PAUSED);
        assertThat(WireMapping.expand(io.agentenv.api.model.SandboxState.RUNNING))
                .doesNotContain(io.agentenv.orchestrator.SandboxState.KILLING);
    }

    @Test
    void every_error_kind_has_a_status() {
        for (ErrorKind kind : ErrorKind.values()) {
            assertThat(ErrorStatus.of(kind)).isBetween(400, 599);
        }
        assertThat(ErrorStatus.of(ErrorKind.NOT_FOUND)).isEqualTo(404);
        assertThat(ErrorStatus.of(ErrorKind.CONFLICT)).isEqualTo(409);
        assertThat(ErrorStatus.of(ErrorKind.UNAVAILABLE)).isEqualTo(503);
    }
}
