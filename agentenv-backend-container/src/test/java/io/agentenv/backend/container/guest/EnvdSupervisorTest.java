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
    void the_first_envd_gets_extra_arguments_after_the_preparation_restarts_neither() {
        assertThat(EnvdLayout.envdSupervisor(List.of()))
                .isEqualTo(EnvdLayout.ENVD_SUPERVISOR)
                .isEqualTo(
                        "mkdir -p /var/log/agentenv; while :; do \"$0\" \"$@\" >>/var/log/agentenv-envd.log 2>&1 </dev/null;"
                                + " echo \"agentenv: envd exited with status $?; starting it again\" >>/var/log/agentenv-envd.log;"
                                + " sleep 0.2; done");

        assertThat(EnvdLayout.envdSupervisor(List.of("--warm-requests", "300")))
                .isEqualTo("first='--warm-requests 300'; if [ -f /run/envd/prepare.sh ]; then (. /run/envd/prepare.sh)"
                        + " >/run/envd/prepare.log 2>&1; s=$?; echo $s >/run/envd/prepare.status.tmp;"
                        + " mv /run/envd/prepare.status.tmp /run/envd/prepare.status; [ $s = 0 ] || exit $s; fi;"
                        + " mkdir -p /var/log/agentenv; while :; do \"$0\" \"$@\" $first >>/var/log/agentenv-envd.log"
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
