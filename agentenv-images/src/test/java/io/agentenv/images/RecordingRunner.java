package io.agentenv.images;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/** The real tools, with every command line kept so tests can count calls and look for secrets. */
final class RecordingRunner implements ToolRunner {

    private final ToolRunner real = new ProcessToolRunner();
    private final List<List<String>> calls = new ArrayList<>();

    @Override
    public Result run(List<String> argv, Map<String, String> env, Duration timeout, Consumer<String> progress)
            throws IOException, InterruptedException {
        synchronized (calls) {
            calls.add(List.copyOf(argv));
        }
        return real.run(argv, env, timeout, progress);
    }

    List<List<String>> calls() {
        synchronized (calls) {
            return List.copyOf(calls);
        }
    }

    /** How many calls ran {@code tool} with {@code subcommand} ({@code skopeo copy}, {@code umoci raw}). */
    long count(String tool, String subcommand) {
        return calls().stream()
                .filter(c -> c.getFirst().equals(tool) && c.contains(subcommand))
                .count();
    }

    void clear() {
        synchronized (calls) {
            calls.clear();
        }
    }

    /** Every argument of every call, for secret checks. */
    List<String> allArguments() {
        List<String> all = new ArrayList<>();
        calls().forEach(all::addAll);
        return all;
    }
}
