package io.agentenv.envd.users;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class UserDirectoryTest {
    @TempDir
    Path dir;

    private UserDirectory users;

    @BeforeEach
    void write_account_files() throws Exception {
        Path passwd = Files.writeString(dir.resolve("passwd"), """
                root:x:0:0:root:/root:/bin/bash
                # a comment
                user:x:1000:1000:User,,,:/home/user:/bin/bash
                broken:x:notanumber:1:::/bin/sh
                """);
        Path group = Files.writeString(dir.resolve("group"), """
                root:x:0:
                sudo:x:27:user,other
                docker:x:999:other, user
                user:x:1000:
                """);
        users = new UserDirectory(passwd, group);
    }

    @Test
    void an_account_has_its_ids_home_shell_and_every_group_primary_first() {
        UserAccount user = users.find("user").orElseThrow();
        assertThat(user.uid()).isEqualTo(1000);
        assertThat(user.gid()).isEqualTo(1000);
        assertThat(user.groups()).containsExactly(1000, 27, 999);
        assertThat(user.home()).isEqualTo(Path.of("/home/user"));
        assertThat(user.shell()).isEqualTo("/bin/bash");
        assertThat(users.findByUid(0).map(UserAccount::name)).contains("root");
    }

    @Test
    void without_passwd_and_group_files_only_root_is_known() {
        UserDirectory bare = new UserDirectory(dir.resolve("no-passwd"), dir.resolve("no-group"));

        assertThat(bare.find("root")).hasValueSatisfying(root -> {
            assertThat(root.uid()).isZero();
            assertThat(root.gid()).isZero();
            assertThat(root.home()).isEqualTo(Path.of("/root"));
        });
        assertThat(bare.findByUid(0)).map(UserAccount::name).contains("root");
        assertThat(bare.find("user")).isEmpty();
        assertThat(bare.findByUid(1000)).isEmpty();
    }

    @Test
    void unknown_and_malformed_entries_are_not_found() {
        assertThat(users.find("nobody")).isEmpty();
        assertThat(users.find("broken")).isEmpty();
    }

    @Test
    void accounts_pick_the_requested_user_then_the_session_default_then_the_fallback() {
        assertThat(new Accounts(users, Optional::empty, "root")
                        .resolve(Optional.of("user"))
                        .name())
                .isEqualTo("user");
        assertThat(new Accounts(users, () -> Optional.of("user"), "root")
                        .resolve(Optional.empty())
                        .name())
                .isEqualTo("user");
        assertThat(new Accounts(users, Optional::empty, "root")
                        .resolve(Optional.empty())
                        .name())
                .isEqualTo("root");
        assertThatThrownBy(() -> new Accounts(users, Optional::empty, "root").resolve(Optional.of("ghost")))
                .isInstanceOf(UnknownUserException.class)
                .hasMessage("invalid user: 'ghost'");
    }
}
