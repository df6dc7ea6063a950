package io.agentenv.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** Dockerfiles read as template builds: the instructions aenv supports, and clear refusals of the others. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class DockerfileTest {
    private static Dockerfile.Step step(String type, String... args) {
        return new Dockerfile.Step(type, List.of(args));
    }

    private static Dockerfile.Plan parse(String text) {
        return Dockerfile.parse(text, Map.of());
    }

    @Test
    void the_supported_instructions_become_steps_between_the_sdks_user_and_workdir() {
        Dockerfile.Plan plan = parse("""
                # syntax=docker/dockerfile:1
                FROM e2bdev/base:latest AS app
                ENV MODE=prod PORT="8080"
                ENV GREETING hello  world
                WORKDIR /srv
                WORKDIR app
                RUN apt-get update && \\
                    # a comment inside the continued line
                    apt-get install -y curl
                RUN ["echo", "it's", "done"]
                COPY --chown=app:app --chmod=755 src/ lib *.sh /srv/app/
                ADD ["notes.txt", "/srv/notes.txt"]
                USER app
                CMD ["python", "-m", "http.server", "8000"]
                """);

        assertThat(plan.fromImage()).isEqualTo("e2bdev/base:latest");
        assertThat(plan.steps())
                .containsExactly(
                        step("USER", "root"),
                        step("WORKDIR", "/"),
                        step("ENV", "MODE", "prod", "PORT", "8080"),
                        step("ENV", "GREETING", "hello world"),
                        step("WORKDIR", "/srv"),
                        step("WORKDIR", "/srv/app"),
                        step("RUN", "apt-get update &&     apt-get install -y curl"),
                        step("RUN", "echo 'it'\\''s' done"),
                        step("COPY", "src/", "/srv/app/", "app:app", "0755"),
                        step("COPY", "lib", "/srv/app/", "app:app", "0755"),
                        step("COPY", "*.sh", "/srv/app/", "app:app", "0755"),
                        step("COPY", "notes.txt", "/srv/notes.txt", "", ""),
                        step("USER", "app"));
        assertThat(plan.startCmd()).contains("python -m http.server 8000");
    }

    @Test
    void args_have_defaults_build_args_win_and_run_sees_them_exported() {
        String text = """
                ARG BASE=e2bdev/base
                FROM ${BASE}:latest
                ARG VERSION=1.0
                ARG EMPTY
                ENV APP_VERSION=$VERSION HOME_DIR=${NOPE:-/opt} FLAG=${VERSION:+on} LITERAL=\\$VERSION
                COPY app-${VERSION}.tar /opt/
                RUN make VERSION=$VERSION
                ENTRYPOINT ["/bin/app"]
                CMD ["--port", "80"]
                """;

        Dockerfile.Plan defaults = parse(text);
        Dockerfile.Plan overridden = Dockerfile.parse(text, Map.of("VERSION", "2.5", "BASE", "custom/image"));

        assertThat(defaults.fromImage()).isEqualTo("e2bdev/base:latest");
        assertThat(defaults.steps())
                .contains(
                        step("ENV", "APP_VERSION", "1.0", "HOME_DIR", "/opt", "FLAG", "on", "LITERAL", "$VERSION"),
                        step("COPY", "app-1.0.tar", "/opt/", "", ""),
                        step("RUN", "export VERSION='1.0'; make VERSION=$VERSION"));
        assertThat(defaults.startCmd()).contains("/bin/app --port 80");
        assertThat(overridden.fromImage()).isEqualTo("custom/image:latest");
        assertThat(overridden.steps())
                .contains(
                        step("COPY", "app-2.5.tar", "/opt/", "", ""),
                        step("RUN", "export VERSION='2.5'; make VERSION=$VERSION"));
    }

    @Test
    void a_shell_form_cmd_is_the_start_command_as_written() {
        Dockerfile.Plan plan = parse("FROM e2bdev/base\nUSER root\nWORKDIR /app\nCMD npm start -- --port 3000\n");

        assertThat(plan.startCmd()).contains("npm start -- --port 3000");
        assertThat(plan.steps()).doesNotContain(step("USER", "user"), step("WORKDIR", "/home/user"));
    }

    @Test
    void unsupported_lines_are_refused_with_their_line_number() {
        assertThatThrownBy(() -> parse("FROM e2bdev/base\n\nEXPOSE 8080\n"))
                .hasMessageContaining("Dockerfile line 3: EXPOSE is not supported");
        assertThatThrownBy(() -> parse("FROM e2bdev/base\nHEALTHCHECK CMD true\n"))
                .hasMessageContaining("line 2: HEALTHCHECK is not supported");
        assertThatThrownBy(() -> parse("FROM golang AS build\nRUN go build\nFROM e2bdev/base\n"))
                .hasMessageContaining("line 3: a second FROM: multi-stage builds are not supported");
        assertThatThrownBy(() -> parse("FROM e2bdev/base\nCOPY --from=build /app /app\n"))
                .hasMessageContaining("line 2: COPY --from is not supported");
        assertThatThrownBy(() -> parse("FROM e2bdev/base\nADD https://example.com/x.tgz /x\n"))
                .hasMessageContaining("line 2: ADD from a URL is not supported");
        assertThatThrownBy(() -> parse("FROM e2bdev/base\nCOPY ../secret /s\n"))
                .hasMessageContaining("inside the context directory");
        assertThatThrownBy(() -> parse("FROM e2bdev/base\nRUN --mount=type=cache,target=/c make\n"))
                .hasMessageContaining("RUN --mount=type=cache,target=/c is not supported");
        assertThatThrownBy(() -> parse("FROM e2bdev/base\nRUN <<EOF\n"))
                .hasMessageContaining("heredocs are not supported");
        assertThatThrownBy(() -> parse("RUN true\n")).hasMessageContaining("line 1: RUN before FROM");
        assertThatThrownBy(() -> parse("# only a comment\n")).hasMessageContaining("no FROM");
    }

    @Test
    void the_escape_directive_changes_the_line_continuation() {
        Dockerfile.Plan plan = parse("# escape=`\nFROM e2bdev/base\nRUN echo a `\n    b\n");

        assertThat(plan.steps()).contains(step("RUN", "echo a     b"));
    }
}
