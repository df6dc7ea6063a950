package io.agentenv.envd.users;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Path resolution, on hand-picked edge paths and {@value #TRIES} generated ones. Every generated path is built from
 * its own seed, shown in its name; {@code path(new SplittableRandom(seed))} rebuilds it alone.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class UserPathsTest {
    private static final UserAccount USER =
            new UserAccount("user", 1000, 1000, List.of(1000), Path.of("/home/user"), "/bin/bash");
    private static final UserAccount ROOT = new UserAccount("root", 0, 0, List.of(0), Path.of("/root"), "/bin/bash");
    private static final long SEED = 0xE2B_0002L;
    private static final int TRIES = 1000;
    private static final int MAX_SEGMENTS = 6;
    private static final List<String> PREFIXES = List.of("", "/", "~/");
    private static final List<String> SPECIAL_SEGMENTS = List.of(".", "..", "~", "a b", "x");

    /** Maven's report names a failing case by its index only: put the case's name, with its seed, in the failure. */
    @RegisterExtension
    static final TestExecutionExceptionHandler NAME_THE_FAILING_CASE = (context, failure) -> {
        throw new AssertionError(context.getDisplayName() + " failed: " + failure, failure);
    };

    static Stream<Arguments> paths() {
        Stream<Arguments> edges = Stream.of(
                        "",
                        "/",
                        "~",
                        "~/",
                        ".",
                        "..",
                        "~/..",
                        "/..",
                        "../../../../../../..",
                        "~/../../../..",
                        "~/~",
                        "./~",
                        "~user",
                        "a b/~/x",
                        "x/./../..",
                        "a//b",
                        "~//x",
                        "trailing/",
                        "...",
                        "x/x/x/x/x/x",
                        "abcde/abcde/abcde/abcde/abcde/abcde")
                .map(path -> argumentSet("'" + path + "'", path));
        Stream<Arguments> generated = new SplittableRandom(SEED)
                .longs(TRIES)
                .mapToObj(seed -> argumentSet("seed 0x" + Long.toHexString(seed), path(new SplittableRandom(seed))));
        return Stream.concat(edges, generated);
    }

    @ParameterizedTest
    @MethodSource("paths")
    void every_resolved_path_is_absolute_and_normalized(String path) {
        Path resolved = UserPaths.resolve(path, USER, Optional.empty());
        assertThat(resolved.isAbsolute())
                .as("'%s' resolves to %s", path, resolved)
                .isTrue();
        assertThat(resolved).as("'%s' resolves to %s", path, resolved).isEqualTo(resolved.normalize());
    }

    @ParameterizedTest
    @MethodSource("paths")
    void absolute_paths_do_not_depend_on_the_user_or_the_workdir(String path) {
        String absolute = "/" + path;
        assertThat(UserPaths.resolve(absolute, USER, Optional.of(Path.of("/work"))))
                .isEqualTo(Path.of(absolute).normalize());
    }

    @Test
    void tilde_and_relative_paths_resolve_against_the_home_the_empty_path_is_the_workdir() {
        Optional<Path> workdir = Optional.of(Path.of("/work"));
        assertThat(UserPaths.resolve("~", USER, workdir)).isEqualTo(Path.of("/home/user"));
        assertThat(UserPaths.resolve("~/a/../b", USER, workdir)).isEqualTo(Path.of("/home/user/b"));
        assertThat(UserPaths.resolve("file.txt", USER, Optional.empty())).isEqualTo(Path.of("/home/user/file.txt"));
        assertThat(UserPaths.resolve("file.txt", USER, workdir)).isEqualTo(Path.of("/home/user/file.txt"));
        assertThat(UserPaths.resolve("", USER, Optional.empty())).isEqualTo(Path.of("/home/user"));
        assertThat(UserPaths.resolve("", USER, workdir)).isEqualTo(Path.of("/work"));
        assertThat(UserPaths.resolve("../../etc", USER, workdir)).isEqualTo(Path.of("/etc"));
    }

    @Test
    void each_user_gets_its_own_home_for_the_same_relative_path() {
        Optional<Path> workdir = Optional.of(Path.of("/home/user"));
        assertThat(UserPaths.resolve("hello.txt", ROOT, workdir)).isEqualTo(Path.of("/root/hello.txt"));
        assertThat(UserPaths.resolve("~/hello.txt", ROOT, workdir)).isEqualTo(Path.of("/root/hello.txt"));
        assertThat(UserPaths.resolve("hello.txt", USER, workdir)).isEqualTo(Path.of("/home/user/hello.txt"));
    }

    @ParameterizedTest
    @MethodSource("paths")
    void only_the_empty_path_depends_on_the_workdir(String path) {
        Path withWorkdir = UserPaths.resolve(path, USER, Optional.of(Path.of("/work")));
        assertThat(withWorkdir)
                .as("'%s' resolves to %s", path, withWorkdir)
                .isEqualTo(path.isEmpty() ? Path.of("/work") : UserPaths.resolve(path, USER, Optional.empty()));
    }

    @Test
    void a_process_without_a_cwd_starts_in_the_workdir_else_the_home_else_the_root(@TempDir Path temp)
            throws IOException {
        Path home = Files.createDirectory(temp.resolve("home"));
        Path workdir = Files.createDirectory(temp.resolve("work"));
        UserAccount user = new UserAccount("u", 1000, 1000, List.of(1000), home, "/bin/sh");
        UserAccount homeless = new UserAccount("h", 1001, 1001, List.of(1001), temp.resolve("missing"), "/bin/sh");

        assertThat(UserPaths.defaultDirectory(user, Optional.of(workdir))).isEqualTo(workdir);
        assertThat(UserPaths.defaultDirectory(user, Optional.of(temp.resolve("gone"))))
                .isEqualTo(home);
        assertThat(UserPaths.defaultDirectory(user, Optional.empty())).isEqualTo(home);
        assertThat(UserPaths.defaultDirectory(homeless, Optional.empty())).isEqualTo(Path.of("/"));
    }

    /**
     * A prefix ({@code ""}, {@code "/"} or {@code "~/"}) and up to {@value #MAX_SEGMENTS} segments, each either a
     * special one ({@code .}, {@code ..}, {@code ~}, one with a space) or one to five lowercase letters.
     */
    static String path(RandomGenerator random) {
        String prefix = PREFIXES.get(random.nextInt(PREFIXES.size()));
        return Stream.generate(() -> segment(random))
                .limit(random.nextInt(MAX_SEGMENTS + 1))
                .collect(Collectors.joining("/", prefix, ""));
    }

    private static String segment(RandomGenerator random) {
        if (random.nextBoolean()) {
            return SPECIAL_SEGMENTS.get(random.nextInt(SPECIAL_SEGMENTS.size()));
        }
        int length = random.nextInt(1, 6);
        StringBuilder letters = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            letters.append((char) random.nextInt('a', 'z' + 1));
        }
        return letters.toString();
    }
}
