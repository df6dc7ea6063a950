package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class FileTreesTest {

    @Test
    void deleting_a_tree_removes_symlinks_without_following_them_a_missing_tree_is_fine(@TempDir Path dir)
            throws Exception {
        Path outside = Files.writeString(dir.resolve("outside.txt"), "host file");
        Path tree = Files.createDirectories(dir.resolve("tree/nested"));
        Files.writeString(tree.resolve("file"), "x");
        Files.createSymbolicLink(tree.resolve("link-to-file"), outside);
        Files.createSymbolicLink(dir.resolve("tree/link-to-dir"), dir);

        FileTrees.deleteTree(dir.resolve("tree"));
        FileTrees.deleteTree(dir.resolve("tree"));

        assertThat(dir.resolve("tree")).doesNotExist();
        assertThat(outside).hasContent("host file");
    }
}
