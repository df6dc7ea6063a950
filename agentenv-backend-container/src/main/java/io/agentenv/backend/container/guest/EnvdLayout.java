package io.agentenv.backend.container.guest;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Where envd lives inside every sandbox: its port, its dirs and files, and the supervisor shell the init runs it under.
 */
public final class EnvdLayout {
    /** envd's port inside every sandbox (E2B's). */
    public static final int ENVD_PORT = 49983;
    /** Where the per-sandbox host dir appears inside; envd's unix socket is in it. */
    public static final String ENVD_GUEST_DIR = "/run/envd";

    public static final String ENVD_SOCKET = "envd.sock";
    /** Where the envd distribution is bound inside (read-only). */
    public static final String ENVD_DIST = "/opt/agentenv-envd";
    /**
     * envd's log journal as JSON lines ({@code envd --journal-file}), inside the sandbox's filesystem: a pause keeps it
     * from there ({@link GuestJournal}) instead of asking envd for it.
     */
    public static final String ENVD_JOURNAL = "/var/log/agentenv/envd.jsonl";
    /** envd's own output, inside the sandbox's filesystem (the init has no stdio). */
    public static final String ENVD_LOG = "/var/log/agentenv-envd.log";
    /**
     * The init's child: runs envd ("$0" "$@") and starts it again whenever it exits (OOM-killed, killed by a user with
     * sudo), 0.2 s apart; the host notices the new envd and initialises it ({@code GenerationLiveness}).
     */
    public static final String ENVD_SUPERVISOR = supervisorScript(List.of());

    /**
     * An image template's preparation (a script the host puts in {@link #ENVD_GUEST_DIR} before the boot), which the
     * boot's supervisor runs as root before its first envd; its output goes to {@link #PREPARATION_LOG} and its exit
     * status to {@link #PREPARATION_STATUS} there, and a failure stops the supervisor (no envd starts).
     */
    public static final String PREPARATION = "prepare.sh";

    public static final String PREPARATION_LOG = "prepare.log";
    public static final String PREPARATION_STATUS = "prepare.status";

    private EnvdLayout() {}

    /**
     * {@link #ENVD_SUPERVISOR}, whose first envd also gets {@code firstArgs} and the envds it starts again do not (a
     * template's boot envd warms itself with {@code --warm-requests}; a copy restored from its checkpoint that
     * restarts envd must not): the same text when there are none. With them (a template's boot), the supervisor runs
     * the {@link #PREPARATION} it finds before its first envd.
     *
     * @param firstArgs plain words (letters, digits, {@code = . _ -}): they are expanded unquoted by the shell
     */
    public static String envdSupervisor(List<String> firstArgs) {
        Pattern plain = Pattern.compile("[A-Za-z0-9=._-]+");
        if (firstArgs.isEmpty()) {
            return ENVD_SUPERVISOR;
        }
        for (String arg : firstArgs) {
            if (!plain.matcher(arg).matches()) {
                throw new IllegalArgumentException("not a plain argument: " + arg);
            }
        }
        return supervisorScript(firstArgs);
    }

    private static String supervisorScript(List<String> firstArgs) {
        boolean first = !firstArgs.isEmpty();
        String dir = ENVD_GUEST_DIR + "/";
        // a boot runs the preparation first, in a subshell (its `set -e` ends that alone), and says how it ended
        String prepare = "if [ -f " + dir + PREPARATION + " ]; then (. " + dir + PREPARATION + ") >" + dir
                + PREPARATION_LOG + " 2>&1; s=$?; echo $s >" + dir + PREPARATION_STATUS + ".tmp; mv " + dir
                + PREPARATION_STATUS + ".tmp " + dir + PREPARATION_STATUS + "; [ $s = 0 ] || exit $s; fi; ";
        return (first ? "first='" + String.join(" ", firstArgs) + "'; " + prepare : "")
                + "mkdir -p " + ENVD_JOURNAL.substring(0, ENVD_JOURNAL.lastIndexOf('/')) + ";"
                + " while :; do \"$0\" \"$@\"" + (first ? " $first" : "") + " >>" + ENVD_LOG + " 2>&1 </dev/null;"
                + " echo \"agentenv: envd exited with status $?; starting it again\" >>" + ENVD_LOG + ";"
                + (first ? " first=;" : "") + " sleep 0.2; done";
    }
}
