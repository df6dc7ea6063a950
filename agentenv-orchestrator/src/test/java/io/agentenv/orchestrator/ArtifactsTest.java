package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.spi.SandboxId;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Deleting artifact trees: everything under them goes, nothing a link points at does. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ArtifactsTest {
    @TempDir
    Path root;

    @Test
    void deleting_a_tree_removes_links_inside_it_but_never_what_they_point_at() throws Exception {
        Path outside = Files.createDirectories(root.resolve("outside/dir"));
        Files.writeString(outside.resolve("keep.txt"), "keep");
        Path tree = Files.createDirectories(root.resolve("tree/layers/0/home/user"));
        Files.writeString(tree.resolve("file"), "x");
        Files.createSymbolicLink(tree.resolve("to-dir"), outside);
        Files.createSymbolicLink(tree.resolve("to-file"), outside.resolve("keep.txt"));
        Files.createSymbolicLink(tree.resolve("dangling"), root.resolve("nowhere"));
        Files.createSymbolicLink(tree.resolve("loop"), tree);

        Artifacts.deleteTree(root.resolve("tree"));

        assertThat(root.resolve("tree")).doesNotExist();
        assertThat(outside.resolve("keep.txt")).hasContent("keep");
    }

    @Test
    void a_tree_whose_root_is_a_link_loses_the_link_only() throws Exception {
        Path target = Files.createDirectories(root.resolve("target"));
        Files.writeString(target.resolve("keep.txt"), "keep");
        Path link = Files.createSymbolicLink(root.resolve("link"), target);

        Artifacts.deleteTree(link);

        assertThat(Files.exists(link, LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(target.resolve("keep.txt")).hasContent("keep");
    }

    @Test
    void a_missing_tree_is_not_an_error_and_a_sandboxs_paused_states_go_together() throws Exception {
        Artifacts.deleteTree(root.resolve("missing"));
        Artifacts artifacts = new Artifacts(root, new Ids());
        SandboxId id = new SandboxId("a".repeat(SandboxId.LENGTH));
        Path first = artifacts.newPausedDir(id);
        Files.writeString(first.resolve("disk.img"), "d");
        artifacts.newPausedDir(id);

        artifacts.deleteSandbox(id);

        assertThat(root.resolve("sandboxes").resolve(id.value())).doesNotExist();
    }
}
