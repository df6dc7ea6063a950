package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LocalFilesystemTest {
    private static final Ownership NOBODY = new Ownership(65534, 65534);

    private final LocalFilesystem fs = new LocalFilesystem();

    @TempDir
    Path dir;

    @Test
    void stat_of_a_file_reports_permission_bits_an_ls_style_string_owner_size_and_time() throws IOException {
        // given
        Path file = Files.writeString(dir.resolve("a.txt"), "hello");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-01-02T03:04:05.123456789Z")));
        // when
        Entry entry = fs.stat(file);
        // then
        assertThat(entry.name()).isEqualTo("a.txt");
        assertThat(entry.type()).isEqualTo(FileType.FILE);
        assertThat(entry.path()).isEqualTo(file.toString());
        assertThat(entry.size()).isEqualTo(5);
        assertThat(entry.mode()).isEqualTo(0644);
        assertThat(entry.permissions()).isEqualTo("-rw-r--r--");
        assertThat(entry.owner()).isEqualTo("root");
        assertThat(entry.group()).isEqualTo("root");
        assertThat(entry.modifiedTime()).isEqualTo(Instant.parse("2026-01-02T03:04:05.123456789Z"));
        assertThat(entry.symlinkTarget()).isEmpty();
        assertThat(entry.metadata()).isEmpty();
    }

    @Test
    void stat_of_a_directory_has_no_type_bits_in_mode() throws IOException {
        Path sub = Files.createDirectory(dir.resolve("sub"));
        Files.setPosixFilePermissions(sub, PosixFilePermissions.fromString("rwxr-xr-x"));

        Entry entry = fs.stat(sub);

        assertThat(entry.type()).isEqualTo(FileType.DIRECTORY);
        assertThat(entry.mode()).isEqualTo(0755);
        assertThat(entry.permissions()).isEqualTo("drwxr-xr-x");
    }

    @Test
    void stat_of_a_symlink_reports_the_target_type_and_the_resolved_target() throws IOException {
        Path target = Files.writeString(dir.resolve("target.txt"), "x");
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-------"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), Path.of("target.txt"));

        Entry entry = fs.stat(link);

        assertThat(entry.name()).isEqualTo("link");
        assertThat(entry.path()).isEqualTo(link.toString());
        assertThat(entry.type()).isEqualTo(FileType.FILE);
        assertThat(entry.mode()).isEqualTo(0600);
        assertThat(entry.permissions()).isEqualTo("Lrwxrwxrwx");
        assertThat(entry.symlinkTarget()).contains(target.toRealPath().toString());
    }

    @Test
    void a_dangling_symlink_has_an_unspecified_type() throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("broken"), dir.resolve("nowhere"));

        Entry entry = fs.stat(link);

        assertThat(entry.type()).isEqualTo(FileType.UNSPECIFIED);
        assertThat(entry.permissions()).startsWith("L");
    }

    @Test
    void stat_of_a_missing_path_is_not_found() {
        assertThatThrownBy(() -> fs.stat(dir.resolve("missing")))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.NOT_FOUND));
    }

    @Test
    void stat_below_a_regular_file_is_not_found() throws IOException {
        Path file = Files.writeString(dir.resolve("plain"), "");

        assertThatThrownBy(() -> fs.stat(file.resolve("child")))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.NOT_FOUND));
    }

    @Test
    void stat_reports_metadata_stored_in_user_xattrs() throws IOException {
        Path file = Files.writeString(dir.resolve("m.txt"), "x");
        Metadata.replace(file, Map.of("author", "ada", "purpose", "test"));

        assertThat(fs.stat(file).metadata())
                .containsExactlyInAnyOrderEntriesOf(Map.of("author", "ada", "purpose", "test"));
    }

    @Test
    void list_dir_with_depth_one_returns_only_children_in_lexical_order() throws IOException {
        Files.createDirectories(dir.resolve("b/inner"));
        Files.writeString(dir.resolve("a.txt"), "");
        Files.writeString(dir.resolve("b/c.txt"), "");

        List<Entry> entries = fs.listDir(dir, 1);

        assertThat(entries).extracting(Entry::name).containsExactly("a.txt", "b");
    }

    @Test
    void list_dir_with_depth_zero_means_depth_one() throws IOException {
        Files.createDirectories(dir.resolve("b/inner"));

        assertThat(fs.listDir(dir, 0)).extracting(Entry::name).containsExactly("b");
    }

    @Test
    void list_dir_descends_as_deep_as_asked_in_pre_order() throws IOException {
        Files.createDirectories(dir.resolve("b/inner/deeper"));
        Files.writeString(dir.resolve("a.txt"), "");
        Files.writeString(dir.resolve("b/c.txt"), "");

        List<Entry> entries = fs.listDir(dir, 2);

        assertThat(entries)
                .extracting(Entry::path)
                .containsExactly(
                        dir.resolve("a.txt").toString(),
                        dir.resolve("b").toString(),
                        dir.resolve("b/c.txt").toString(),
                        dir.resolve("b/inner").toString());
    }

    @Test
    void list_dir_does_not_descend_into_symlinked_directories() throws IOException {
        Path outside = Files.createDirectories(dir.resolve("outside/x"));
        Path listed = Files.createDirectory(dir.resolve("listed"));
        Files.createSymbolicLink(listed.resolve("link"), outside.getParent());

        List<Entry> entries = fs.listDir(listed, 5);

        assertThat(entries).extracting(Entry::name).containsExactly("link");
        assertThat(entries.getFirst().type()).isEqualTo(FileType.DIRECTORY);
    }

    @Test
    void list_dir_through_a_symlink_keeps_the_requested_prefix_in_paths() throws IOException {
        Path real = Files.createDirectory(dir.resolve("real"));
        Files.writeString(real.resolve("f"), "");
        Path alias = Files.createSymbolicLink(dir.resolve("alias"), real);

        assertThat(fs.listDir(alias, 1))
                .extracting(Entry::path)
                .containsExactly(alias.resolve("f").toString());
    }

    @Test
    void list_dir_of_a_file_is_an_invalid_argument_and_of_a_missing_path_not_found() throws IOException {
        Path file = Files.writeString(dir.resolve("f"), "");

        assertThatThrownBy(() -> fs.listDir(file, 1))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.INVALID_ARGUMENT));
        assertThatThrownBy(() -> fs.listDir(dir.resolve("missing"), 1))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.NOT_FOUND));
    }

    @Test
    void make_dir_creates_missing_parents_owned_by_the_user() throws IOException {
        Path deep = dir.resolve("x/y/z");

        Entry entry = fs.makeDir(deep, NOBODY);

        assertThat(entry.type()).isEqualTo(FileType.DIRECTORY);
        assertThat(entry.path()).isEqualTo(deep.toString());
        for (Path p : List.of(dir.resolve("x"), dir.resolve("x/y"), deep)) {
            assertThat(Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS))
                    .isEqualTo(65534);
            assertThat(Files.getAttribute(p, "unix:gid", LinkOption.NOFOLLOW_LINKS))
                    .isEqualTo(65534);
        }
        assertThat(Files.getAttribute(dir, "unix:uid")).isEqualTo(0);
    }

    @Test
    void make_dir_of_an_existing_dir_is_already_exists_and_of_a_file_invalid_argument() throws IOException {
        Path file = Files.writeString(dir.resolve("f"), "");

        assertThatThrownBy(() -> fs.makeDir(dir, NOBODY))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.ALREADY_EXISTS));
        assertThatThrownBy(() -> fs.makeDir(file, NOBODY))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.INVALID_ARGUMENT));
        assertThatThrownBy(() -> fs.makeDir(file.resolve("below"), NOBODY))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.INVALID_ARGUMENT));
    }

    @Test
    void move_renames_creates_destination_parents_and_returns_the_new_entry() throws IOException {
        Path source = Files.writeString(dir.resolve("a.txt"), "abc");
        Path destination = dir.resolve("new/parent/b.txt");

        Entry entry = fs.move(source, destination, NOBODY);

        assertThat(entry.path()).isEqualTo(destination.toString());
        assertThat(entry.name()).isEqualTo("b.txt");
        assertThat(entry.size()).isEqualTo(3);
        assertThat(source).doesNotExist();
        assertThat(Files.getAttribute(dir.resolve("new"), "unix:uid")).isEqualTo(65534);
    }

    @Test
    void move_replaces_an_existing_destination_file() throws IOException {
        Path source = Files.writeString(dir.resolve("a"), "new");
        Path destination = Files.writeString(dir.resolve("b"), "old");

        fs.move(source, destination, NOBODY);

        assertThat(destination).hasContent("new");
    }

    @Test
    void move_of_a_missing_source_is_not_found_and_creates_nothing() {
        assertThatThrownBy(() -> fs.move(dir.resolve("missing"), dir.resolve("p/q"), NOBODY))
                .isInstanceOfSatisfying(
                        FsException.class, e -> assertThat(e.error()).isEqualTo(FsError.NOT_FOUND));
        assertThat(dir.resolve("p")).doesNotExist();
    }

    @Test
    void remove_deletes_whole_trees_and_ignores_missing_paths() throws IOException {
        Files.createDirectories(dir.resolve("t/u/v"));
        Files.writeString(dir.resolve("t/u/v/f"), "x");

        fs.remove(dir.resolve("t"));
        fs.remove(dir.resolve("never-existed"));

        assertThat(dir.resolve("t")).doesNotExist();
    }

    @Test
    void remove_of_a_symlink_keeps_its_target() throws IOException {
        Path target = Files.createDirectory(dir.resolve("target"));
        Files.writeString(target.resolve("kept"), "x");
        Path link = Files.createSymbolicLink(dir.resolve("link"), target);

        fs.remove(link);

        assertThat(link).doesNotExist();
        assertThat(target.resolve("kept")).exists();
    }

    @Test
    void relative_paths_are_refused_because_resolution_belongs_to_the_caller() {
        assertThatThrownBy(() -> fs.stat(Path.of("relative"))).isInstanceOf(IllegalArgumentException.class);
    }
}
