package io.agentenv.backend.container.host;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.OptionalInt;

/** A fake {@link ProcessRunner}: records every command and answers from a script (success with stdout, or a failure). */
public final class RecordingProcessRunner implements ProcessRunner {

    private final List<Command> commands = new ArrayList<>();
    private final Deque<Object> answers = new ArrayDeque<>();

    /** The next command succeeds and prints {@code stdout}. */
    public RecordingProcessRunner succeed(String stdout) {
        answers.add(new CommandResult(stdout, "", Duration.ofMillis(1)));
        return this;
    }

    /** The next command exits with {@code exit} and prints {@code stderr}. */
    public RecordingProcessRunner fail(int exit, String stderr) {
        answers.add(stderr + "\u0000" + exit);
        return this;
    }

    @Override
    public synchronized CommandResult run(Command command) throws CommandFailedException {
        commands.add(command);
        Object answer = answers.poll();
        if (answer == null || answer instanceof CommandResult) {
            return answer == null ? new CommandResult("", "", Duration.ofMillis(1)) : (CommandResult) answer;
        }
        String[] failure = ((String) answer).split("\u0000");
        throw new CommandFailedException(
                CommandFailedException.Reason.EXITED_NONZERO,
                command.argv(),
                OptionalInt.of(Integer.parseInt(failure[1])),
                failure[0],
                null);
    }

    public synchronized List<Command> commands() {
        return List.copyOf(commands);
    }

    public synchronized Command last() {
        return commands.getLast();
    }
}
