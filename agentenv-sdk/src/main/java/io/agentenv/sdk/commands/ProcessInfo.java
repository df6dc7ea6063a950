package io.agentenv.sdk.commands;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A process envd started and still tracks ({@link Commands#list()}).
 *
 * @param pid  its process id
 * @param tag  the tag it was started with, if any
 * @param cmd  the executable
 * @param args its arguments
 * @param envs the environment variables it was started with
 * @param cwd  its working directory, if one was given
 */
public record ProcessInfo(
        int pid, Optional<String> tag, String cmd, List<String> args, Map<String, String> envs, Optional<String> cwd) {
    /** Copies the collections. */
    public ProcessInfo {
        args = List.copyOf(args);
        envs = Map.copyOf(envs);
    }
}
