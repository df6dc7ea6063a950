package io.agentenv.orchestrator;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The user, working directory and environment a build's steps so far set (ENV, USER, WORKDIR). */
final class BuildState {
    String user;
    Optional<String> workdir;
    final Map<String, String> env;

    BuildState(String user, Optional<String> workdir, Map<String, String> env) {
        this.user = user;
        this.workdir = workdir;
        this.env = env;
    }

    BuildState copy() {
        return new BuildState(user, workdir, new LinkedHashMap<>(env));
    }

    /** What a step does to the state (ENV, USER, WORKDIR); nothing for the others. Malformed ones: nothing. */
    void apply(TemplateBuilder.Step step) {
        List<String> args = step.args();
        switch (step.type()) {
            case "ENV" -> {
                if (args.size() % 2 == 0) {
                    for (int i = 0; i < args.size(); i += 2) {
                        env.put(args.get(i), args.get(i + 1));
                    }
                }
            }
            case "WORKDIR" -> {
                if (args.size() == 1 && !args.getFirst().isBlank()) {
                    workdir = Optional.of(args.getFirst());
                }
            }
            case "USER" -> {
                if (args.size() == 1 && !args.getFirst().isBlank()) {
                    user = args.getFirst();
                }
            }
            default -> {}
        }
    }

    /** The image config's environment, working directory and (named) user as the steps' starting point. */
    void applyImageConfig(ImageSource.Image image) {
        for (String entry : image.env()) {
            int eq = entry.indexOf('=');
            if (eq > 0) {
                env.put(entry.substring(0, eq), entry.substring(eq + 1));
            }
        }
        image.workdir().filter(w -> w.startsWith("/")).ifPresent(w -> workdir = Optional.of(w));
        image.user()
                .map(u -> u.contains(":") ? u.substring(0, u.indexOf(':')) : u)
                .filter(u -> !u.isBlank() && !u.chars().allMatch(Character::isDigit))
                .ifPresent(u -> user = u);
    }

    /** The defaults the template's sandboxes get: the last USER and WORKDIR. */
    GuestDefaults defaults() {
        return new GuestDefaults(Optional.of(user), workdir);
    }
}
