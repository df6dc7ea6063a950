package io.agentenv.backend.container.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** The init's script that runs envd ({@link EnvdLayout#envdSupervisor}). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EnvdSupervisorTest {

    @Test
    void the_supervisor_gives_the_first_envd_its_extra_arguments_and_restarted_ones_none() {
        assertThat(EnvdLayout.envdSupervisor(List.of()))
                .isEqualTo(EnvdLayout.ENVD_SUPERVISOR)
                .isEqualTo(
                        "mkdir -p /var/log/agentenv; while :; do \"$0\" \"$@\" >>/var/log/agentenv-envd.log 2>&1 </dev/null;"
                                + " echo \"agentenv: envd exited with status $?; starting it again\" >>/var/log/agentenv-envd.log;"
                                + " sleep 0.2; done");

        assertThat(EnvdLayout.envdSupervisor(List.of("--warm-requests", "300")))
                .isEqualTo(
                        "first='--warm-requests 300'; mkdir -p /var/log/agentenv; while :; do \"$0\" \"$@\" $first >>/var/log/agentenv-envd.log"
                                + " 2>&1 </dev/null; echo \"agentenv: envd exited with status $?; starting it again\""
                                + " >>/var/log/agentenv-envd.log; first=; sleep 0.2; done");
    }

    @Test
    void first_run_arguments_the_shell_would_split_or_expand_are_refused() {
        assertThatThrownBy(() -> EnvdLayout.envdSupervisor(List.of("--x", "a b")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EnvdLayout.envdSupervisor(List.of("$(reboot)")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EnvdLayout.envdSupervisor(List.of("'"))).isInstanceOf(IllegalArgumentException.class);
    }
}
