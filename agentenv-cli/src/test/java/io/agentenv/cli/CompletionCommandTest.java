package io.agentenv.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** aenv completion bash: picocli's completion script for aenv's command tree, and bash completing with it. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CompletionCommandTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int aenv(String... args) {
        return Aenv.run(args, Map.of(), new Stdio(java.io.InputStream.nullInputStream(), out, err, true), hook -> {});
    }

    @Test
    void completion_bash_prints_a_script_that_names_the_commands_and_their_subcommands() {
        assertThat(aenv("completion", "bash"))
                .as(err.toString(StandardCharsets.UTF_8))
                .isZero();

        String script = out.toString(StandardCharsets.UTF_8);
        assertThat(script)
                .startsWith("#!/usr/bin/env bash")
                .contains("complete -F _complete_aenv")
                .contains("create")
                .contains("list")
                .contains("exec")
                .contains("files")
                .contains("volume")
                .contains("delete-path")
                .contains("completion")
                .contains("put")
                .contains("get");
    }

    @Test
    void bash_completes_command_names_and_options_with_the_script(@TempDir Path dir) throws Exception {
        assertThat(aenv("completion", "bash")).isZero();
        Path script = dir.resolve("aenv.bash");
        Files.write(script, out.toByteArray());

        assertThat(complete(script, "aenv", "fi")).isEqualTo("files");
        assertThat(complete(script, "aenv", "files", "p")).isEqualTo("put");
        assertThat(complete(script, "aenv", "vol")).isEqualTo("volume");
        assertThat(complete(script, "aenv", "volume", "in")).isEqualTo("info");
        assertThat(complete(script, "aenv", "create", "--vol")).isEqualTo("--volume");
        assertThat(complete(script, "aenv", "exec", "--no-s")).isEqualTo("--no-stdin");
    }

    @Test
    void another_shell_is_a_usage_error() {
        assertThat(aenv("completion", "fish")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("bash");
    }

    /** What bash offers for the last word, with the script loaded (COMPREPLY, sorted, space-separated). */
    private static String complete(Path script, String... words) throws Exception {
        String line =
                "source " + script + "; COMP_WORDS=(" + String.join(" ", words) + "); COMP_CWORD=" + (words.length - 1)
                        + "; COMP_LINE='" + String.join(" ", words) + "'; COMP_POINT=${#COMP_LINE}; _complete_aenv;"
                        + " printf '%s\\n' \"${COMPREPLY[@]}\" | sort | xargs";
        // stderr dropped: compopt complains outside a real completion, harmlessly
        Process bash = new ProcessBuilder("bash", "-c", line)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String text = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(bash.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return text;
    }
}
