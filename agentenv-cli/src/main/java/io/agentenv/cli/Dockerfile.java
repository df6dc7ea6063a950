package io.agentenv.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A Dockerfile read as a template build: FROM (one stage), RUN (shell and exec form), COPY and ADD of files in the
 * context, ENV, WORKDIR, USER, ARG (with defaults, overridden by build args), CMD and ENTRYPOINT (the start command).
 * Any other instruction is refused with its line. As the E2B SDK reads a Dockerfile, the steps run as root from
 * {@code /} until USER or WORKDIR say otherwise, and a template that never sets them ends with user {@code user} in
 * {@code /home/user}.
 *
 * <p>ARG values and ENV values are substituted ({@code $NAME}, {@code ${NAME}}, {@code ${NAME:-default}},
 * {@code ${NAME:+value}}) in FROM, COPY, ADD, ENV, WORKDIR and USER; RUN sees the ARG values as exported variables.
 */
final class Dockerfile {
    /** One build step, as the build API takes it: RUN, COPY, ENV, WORKDIR or USER with its arguments. */
    record Step(String type, List<String> args) {
        Step {
            args = List.copyOf(args);
        }
    }

    /** The image the template starts from, its steps and its start command (from CMD/ENTRYPOINT). */
    record Plan(String fromImage, List<Step> steps, Optional<String> startCmd) {
        Plan {
            steps = List.copyOf(steps);
        }
    }

    private static final String DEFAULT_USER = "user";
    private static final String DEFAULT_WORKDIR = "/home/user";

    private final Map<String, String> buildArgs;
    private final Map<String, String> globalArgs = new LinkedHashMap<>();
    /** The ARG values in scope after FROM (exported to RUN) and the ENV values: both substitute. */
    private final Map<String, String> stageArgs = new LinkedHashMap<>();

    private final Map<String, String> env = new LinkedHashMap<>();
    private final List<Step> steps = new ArrayList<>();
    private String fromImage;
    private String workdir = "/";
    private boolean userSet;
    private boolean workdirSet;
    private List<String> cmd;
    private boolean cmdShell;
    private List<String> entrypoint;
    private boolean entrypointShell;
    private int line;

    private Dockerfile(Map<String, String> buildArgs) {
        this.buildArgs = Map.copyOf(buildArgs);
    }

    /** Reads {@code text}; IllegalArgumentException names the line of what cannot be built. */
    static Plan parse(String text, Map<String, String> buildArgs) {
        return new Dockerfile(buildArgs).read(text);
    }

    private Plan read(String text) {
        String[] lines = text.replace("\r\n", "\n").split("\n", -1);
        char escape = escapeDirective(lines);
        // as the E2B SDK reads a Dockerfile: the steps run as root from /, like a docker build's
        steps.add(new Step("USER", List.of("root")));
        steps.add(new Step("WORKDIR", List.of("/")));
        int i = 0;
        while (i < lines.length) {
            String raw = lines[i];
            String trimmed = raw.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                i++;
                continue;
            }
            line = i + 1;
            StringBuilder logical = new StringBuilder();
            String current = raw;
            while (true) {
                String stripped = current.stripTrailing();
                if (!stripped.isEmpty() && stripped.charAt(stripped.length() - 1) == escape && i + 1 < lines.length) {
                    logical.append(stripped, 0, stripped.length() - 1);
                    i++;
                    // comment and empty lines inside a continued instruction are left out, as Docker does
                    while (i < lines.length
                            && (lines[i].strip().startsWith("#") || lines[i].isBlank())
                            && i + 1 < lines.length) {
                        i++;
                    }
                    current = lines[i];
                } else {
                    logical.append(stripped);
                    break;
                }
            }
            i++;
            instruction(logical.toString().strip(), escape);
        }
        if (fromImage == null) {
            throw new IllegalArgumentException("the Dockerfile has no FROM line");
        }
        if (!userSet) {
            steps.add(new Step("USER", List.of(DEFAULT_USER)));
        }
        if (!workdirSet) {
            steps.add(new Step("WORKDIR", List.of(DEFAULT_WORKDIR)));
        }
        return new Plan(fromImage, steps, startCommand());
    }

    /** The {@code # escape=`} directive at the top, else a backslash. */
    private static char escapeDirective(String[] lines) {
        for (String raw : lines) {
            String trimmed = raw.strip();
            if (!trimmed.startsWith("#")) {
                break;
            }
            String directive =
                    trimmed.substring(1).strip().toLowerCase(Locale.ROOT).replace(" ", "");
            if (directive.startsWith("escape=") && directive.length() == "escape=".length() + 1) {
                return directive.charAt(directive.length() - 1);
            }
            if (!directive.matches("[a-z]+=.*")) {
                break;
            }
        }
        return '\\';
    }

    private void instruction(String text, char escape) {
        int space = indexOfSpace(text);
        String keyword = (space < 0 ? text : text.substring(0, space)).toUpperCase(Locale.ROOT);
        String rest = space < 0 ? "" : text.substring(space + 1).strip();
        if (fromImage == null && !keyword.equals("FROM") && !keyword.equals("ARG")) {
            throw error(keyword + " before FROM: a Dockerfile starts with FROM (ARG may come before it)");
        }
        switch (keyword) {
            case "FROM" -> from(rest, escape);
            case "ARG" -> arg(rest, escape);
            case "ENV" -> envStep(rest, escape);
            case "RUN" -> run(rest);
            case "COPY", "ADD" -> copy(keyword, rest, escape);
            case "WORKDIR" -> workdir(rest, escape);
            case "USER" -> user(rest, escape);
            case "CMD" -> {
                cmdShell = !isJsonArray(rest);
                cmd = command(keyword, rest);
            }
            case "ENTRYPOINT" -> {
                entrypointShell = !isJsonArray(rest);
                entrypoint = command(keyword, rest);
            }
            case "EXPOSE" ->
                throw error("EXPOSE is not supported: a sandbox's ports are reachable without it; remove the line");
            default ->
                throw error(keyword + " is not supported (supported: FROM, RUN, COPY, ADD, ENV, WORKDIR, "
                        + "USER, ARG, CMD, ENTRYPOINT)");
        }
    }

    private void from(String rest, char escape) {
        if (fromImage != null) {
            throw error("a second FROM: multi-stage builds are not supported");
        }
        List<String> words = words(rest, escape);
        if (words.isEmpty()) {
            throw error("FROM needs an image");
        }
        if (words.getFirst().startsWith("--")) {
            throw error("FROM " + words.getFirst() + " is not supported");
        }
        if (!(words.size() == 1 || (words.size() == 3 && words.get(1).equalsIgnoreCase("AS")))) {
            throw error("FROM takes an image and optionally 'AS name'");
        }
        fromImage = substitute(words.getFirst(), globalArgs);
        if (fromImage.isEmpty()) {
            throw error("FROM names no image (an ARG without a value?)");
        }
    }

    private void arg(String rest, char escape) {
        List<String> words = words(rest, escape);
        if (words.isEmpty()) {
            throw error("ARG needs a name");
        }
        for (String word : words) {
            int eq = word.indexOf('=');
            String name = eq < 0 ? word : word.substring(0, eq);
            if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw error("ARG " + name + ": not a variable name");
            }
            Optional<String> fallback = eq < 0
                    ? Optional.ofNullable(fromImage == null ? null : globalArgs.get(name))
                    : Optional.of(substitute(word.substring(eq + 1), scope()));
            Optional<String> value = Optional.ofNullable(buildArgs.get(name)).or(() -> fallback);
            Map<String, String> target = fromImage == null ? globalArgs : stageArgs;
            value.ifPresentOrElse(v -> target.put(name, v), () -> target.remove(name));
        }
    }

    private void envStep(String rest, char escape) {
        List<String> words = words(rest, escape);
        if (words.isEmpty()) {
            throw error("ENV needs a name and a value");
        }
        Map<String, String> pairs = new LinkedHashMap<>();
        if (!words.getFirst().contains("=")) { // the old form: ENV NAME value with spaces
            int space = indexOfSpace(rest);
            if (space < 0) {
                throw error("ENV " + rest + " has no value");
            }
            pairs.put(
                    words.getFirst(),
                    substitute(unquote(rest.substring(space + 1).strip(), escape), scope()));
        } else {
            for (String word : words) {
                int eq = word.indexOf('=');
                if (eq <= 0) {
                    throw error("ENV " + word + ": expected NAME=value");
                }
                pairs.put(word.substring(0, eq), substitute(word.substring(eq + 1), scope()));
            }
        }
        List<String> args = new ArrayList<>();
        pairs.forEach((k, v) -> {
            args.add(k);
            args.add(v);
        });
        env.putAll(pairs);
        steps.add(new Step("ENV", args));
    }

    private void run(String rest) {
        if (rest.startsWith("--")) {
            throw error("RUN " + rest.split("\\s", 2)[0] + " is not supported");
        }
        if (rest.contains("<<") && rest.matches("(?s).*<<-?\\s*['\"]?[A-Za-z_][A-Za-z0-9_]*['\"]?\\s*$")) {
            throw error("heredocs are not supported; write the command on RUN lines");
        }
        String command = isJsonArray(rest) ? shellJoin(jsonArray("RUN", rest)) : rest;
        if (command.isBlank()) {
            throw error("RUN needs a command");
        }
        List<String> exports = new ArrayList<>();
        stageArgs.forEach((k, v) -> {
            if (!env.containsKey(k)) {
                exports.add(k + "=" + quote(v));
            }
        });
        String script = exports.isEmpty() ? command : "export " + String.join(" ", exports) + "; " + command;
        steps.add(new Step("RUN", List.of(script)));
    }

    private void copy(String keyword, String rest, char escape) {
        String user = "";
        String mode = "";
        List<String> words = isJsonArray(rest) ? List.of() : words(rest, escape);
        int first = 0;
        while (first < words.size() && words.get(first).startsWith("--")) {
            String flag = words.get(first);
            if (flag.startsWith("--chown=")) {
                user = substitute(flag.substring("--chown=".length()), scope());
            } else if (flag.startsWith("--chmod=")) {
                String value = flag.substring("--chmod=".length());
                if (!value.matches("[0-7]{3,4}")) {
                    throw error(keyword + " --chmod takes an octal mode, e.g. 0755");
                }
                mode = value.length() == 3 ? "0" + value : value;
            } else {
                throw error(keyword + " " + flag.split("=", 2)[0] + " is not supported");
            }
            first++;
        }
        List<String> paths = isJsonArray(rest) ? jsonArray(keyword, rest) : words.subList(first, words.size());
        if (paths.size() < 2) {
            throw error(keyword + " needs a source and a destination");
        }
        String dest = substitute(paths.getLast(), scope());
        for (String source : paths.subList(0, paths.size() - 1)) {
            String src = substitute(source, scope());
            if (src.matches("(?i)(https?|git)://.*") || src.startsWith("git@")) {
                throw error(keyword + " from a URL is not supported; download it with RUN instead");
            }
            if (src.startsWith("/") || src.equals("..") || src.startsWith("../") || src.contains("/../")) {
                throw error(keyword + " " + src + ": the source must be a path inside the context directory");
            }
            steps.add(new Step("COPY", List.of(src, dest, user, mode)));
        }
    }

    private void workdir(String rest, char escape) {
        String path = substitute(unquote(rest, escape), scope());
        if (path.isEmpty()) {
            throw error("WORKDIR needs a path");
        }
        workdir = path.startsWith("/") ? path : (workdir.endsWith("/") ? workdir : workdir + "/") + path;
        workdirSet = true;
        steps.add(new Step("WORKDIR", List.of(workdir)));
    }

    private void user(String rest, char escape) {
        String user = substitute(unquote(rest, escape), scope());
        if (user.isEmpty() || user.contains(" ")) {
            throw error("USER needs one user name");
        }
        userSet = true;
        steps.add(new Step("USER", List.of(user)));
    }

    private List<String> command(String keyword, String rest) {
        if (rest.isBlank()) {
            throw error(keyword + " needs a command");
        }
        return isJsonArray(rest) ? jsonArray(keyword, rest) : List.of(rest);
    }

    /** ENTRYPOINT (exec form) followed by CMD as its arguments, else the one that is there; as a shell command. */
    private Optional<String> startCommand() {
        if (entrypoint != null) {
            if (entrypointShell || cmd == null) {
                return Optional.of(entrypointShell ? entrypoint.getFirst() : shellJoin(entrypoint));
            }
            List<String> all = new ArrayList<>(entrypoint);
            if (cmdShell) {
                all.addAll(List.of("/bin/sh", "-c", cmd.getFirst()));
            } else {
                all.addAll(cmd);
            }
            return Optional.of(shellJoin(all));
        }
        if (cmd != null) {
            return Optional.of(cmdShell ? cmd.getFirst() : shellJoin(cmd));
        }
        return Optional.empty();
    }

    private Map<String, String> scope() {
        Map<String, String> scope = new LinkedHashMap<>(stageArgs);
        scope.putAll(env);
        return scope;
    }

    // ---- words, quotes, JSON arrays, substitution ----------------------------------------------------------------

    private static int indexOfSpace(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (Character.isWhitespace(text.charAt(i))) {
                return i;
            }
        }
        return -1;
    }

    /** Whitespace-separated words; quotes group (and are removed), the escape character takes the next one. */
    private List<String> words(String text, char escape) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quote == 0 && Character.isWhitespace(c)) {
                if (inWord) {
                    words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
                continue;
            }
            inWord = true;
            if (c == escape && quote != '\'' && i + 1 < text.length()) {
                char next = text.charAt(++i);
                if (next == '$') {
                    word.append(escape); // kept for substitute(), which makes it a literal $
                }
                word.append(next);
            } else if (quote == 0 && (c == '"' || c == '\'')) {
                quote = c;
            } else if (c == quote) {
                quote = 0;
            } else if (c == '$' && quote == '\'') {
                word.append(escape).append('$');
            } else {
                word.append(c);
            }
        }
        if (quote != 0) {
            throw error("an unterminated " + quote + " quote");
        }
        if (inWord) {
            words.add(word.toString());
        }
        return words;
    }

    /** A single value: quotes removed; words joined by one space. */
    private String unquote(String text, char escape) {
        return String.join(" ", words(text, escape));
    }

    private static boolean isJsonArray(String text) {
        return text.startsWith("[") && text.endsWith("]");
    }

    /** A JSON array of strings (the exec form). */
    private List<String> jsonArray(String keyword, String text) {
        List<String> items = new ArrayList<>();
        int i = 1;
        int end = text.length() - 1;
        while (true) {
            while (i < end && Character.isWhitespace(text.charAt(i))) {
                i++;
            }
            if (i >= end) {
                break;
            }
            if (text.charAt(i) != '"') {
                throw error(keyword + " in exec form takes a JSON array of strings");
            }
            StringBuilder item = new StringBuilder();
            i++;
            while (i < end && text.charAt(i) != '"') {
                char c = text.charAt(i);
                if (c == '\\' && i + 1 < end) {
                    char next = text.charAt(++i);
                    switch (next) {
                        case 'n' -> item.append('\n');
                        case 't' -> item.append('\t');
                        case 'u' -> {
                            if (i + 4 >= end) {
                                throw error(keyword + ": a bad \\u escape");
                            }
                            item.append((char) Integer.parseInt(text.substring(i + 1, i + 5), 16));
                            i += 4;
                        }
                        default -> item.append(next);
                    }
                } else {
                    item.append(c);
                }
                i++;
            }
            if (i >= end) {
                throw error(keyword + ": an unterminated string in the JSON array");
            }
            items.add(item.toString());
            i++;
            while (i < end && Character.isWhitespace(text.charAt(i))) {
                i++;
            }
            if (i < end) {
                if (text.charAt(i) != ',') {
                    throw error(keyword + " in exec form takes a JSON array of strings");
                }
                i++;
            }
        }
        if (items.isEmpty()) {
            throw error(keyword + " needs a command");
        }
        return items;
    }

    /** {@code $NAME}, {@code ${NAME}}, {@code ${NAME:-word}}, {@code ${NAME:+word}}; an escaped {@code $} stays. */
    private String substitute(String text, Map<String, String> vars) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if ((c == '\\' || c == '`') && i + 1 < text.length() && text.charAt(i + 1) == '$') {
                out.append('$');
                i++;
            } else if (c == '$' && i + 1 < text.length() && text.charAt(i + 1) == '{') {
                int close = text.indexOf('}', i + 2);
                if (close < 0) {
                    throw error("an unterminated ${ in " + text);
                }
                String inner = text.substring(i + 2, close);
                int op = inner.indexOf(':');
                String name = op < 0 ? inner : inner.substring(0, op);
                String value = vars.get(name);
                if (op >= 0 && inner.length() > op + 1) {
                    String word = inner.substring(op + 2);
                    value = switch (inner.charAt(op + 1)) {
                        case '-' -> value == null || value.isEmpty() ? word : value;
                        case '+' -> value == null || value.isEmpty() ? "" : word;
                        default -> throw error("unsupported substitution ${" + inner + "}");
                    };
                }
                out.append(value == null ? "" : value);
                i = close;
            } else if (c == '$' && i + 1 < text.length() && isNameStart(text.charAt(i + 1))) {
                int j = i + 1;
                while (j < text.length() && isNamePart(text.charAt(j))) {
                    j++;
                }
                out.append(vars.getOrDefault(text.substring(i + 1, j), ""));
                i = j - 1;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isNameStart(char c) {
        return Character.isLetter(c) || c == '_';
    }

    private static boolean isNamePart(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }

    /** Words as one shell command line, each quoted when it needs to be. */
    static String shellJoin(List<String> words) {
        List<String> quoted = new ArrayList<>();
        for (String word : words) {
            quoted.add(word.matches("[A-Za-z0-9_./:=@%+,-]+") ? word : quote(word));
        }
        return String.join(" ", quoted);
    }

    static String quote(String text) {
        return "'" + text.replace("'", "'\\''") + "'";
    }

    private IllegalArgumentException error(String message) {
        return new IllegalArgumentException("Dockerfile line " + line + ": " + message);
    }
}
