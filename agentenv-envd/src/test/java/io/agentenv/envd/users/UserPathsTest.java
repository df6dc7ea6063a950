package io.agentenv.envd.users;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class UserPathsTest {
    private static final UserAccount USER = new UserAccount("user", 1000, 1000, List.of(1000), Path.of("/home/user"), "/bin/bash");

    @Provide
    Arbitrary<String> paths() {
        Arbitrary<String> segment = Arbitraries.oneOf(Arbitraries.of(".", "..", "~", "a b", "x"),
                Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(5));
        return segment.list().ofMaxSize(6).flatMap(parts -> Arbitraries.of("", "/", "~/").map(p -> p + String.join("/", parts)));
    }

    @Property
    void every_resolved_path_is_absolute_and_normalized(@ForAll("paths") String path) {
        Path resolved = UserPaths.resolve(path, USER, Optional.empty());
        assertThat(resolved.isAbsolute()).isTrue();
        assertThat(resolved).isEqualTo(resolved.normalize());
    }

    @Property
    void absolute_paths_do_not_depend_on_the_user_or_the_workdir(@ForAll("paths") String path) {
        String absolute = "/" + path;
        assertThat(UserPaths.resolve(absolute, USER, Optional.of(Path.of("/work"))))
                .isEqualTo(Path.of(absolute).normalize());
    }

    @Example
    void tilde_expands_to_home_and_relative_paths_use_the_workdir_or_home() {
        assertThat(UserPaths.resolve("~", USER, Optional.empty())).isEqualTo(Path.of("/home/user"));
        assertThat(UserPaths.resolve("~/a/../b", USER, Optional.empty())).isEqualTo(Path.of("/home/user/b"));
        assertThat(UserPaths.resolve("file.txt", USER, Optional.empty())).isEqualTo(Path.of("/home/user/file.txt"));
        assertThat(UserPaths.resolve("file.txt", USER, Optional.of(Path.of("/work")))).isEqualTo(Path.of("/work/file.txt"));
        assertThat(UserPaths.resolve("", USER, Optional.empty())).isEqualTo(Path.of("/home/user"));
        assertThat(UserPaths.resolve("../../etc", USER, Optional.empty())).isEqualTo(Path.of("/etc"));
    }
}
