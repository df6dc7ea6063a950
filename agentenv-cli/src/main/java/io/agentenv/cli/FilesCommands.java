package io.agentenv.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.FileType;
import io.agentenv.envd.protocol.filesystem.ListDirRequest;
import io.agentenv.envd.protocol.filesystem.ListDirResponse;
import io.agentenv.envd.protocol.filesystem.MakeDirRequest;
import io.agentenv.envd.protocol.filesystem.MakeDirResponse;
import io.agentenv.envd.protocol.filesystem.RemoveRequest;
import io.agentenv.envd.protocol.filesystem.RemoveResponse;
import io.agentenv.envd.protocol.filesystem.StatRequest;
import io.agentenv.envd.protocol.filesystem.StatResponse;
import io.agentenv.spi.EnvdException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongFunction;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code aenv files}: copy files in and out of a sandbox and list or remove them, through envd's {@code /files} and
 * filesystem RPCs. Relative sandbox paths are relative to the user's home.
 */
@Command(
        name = "files",
        mixinStandardHelpOptions = true,
        description = "Copy files to and from a sandbox, list and remove them.",
        subcommands = CommandLine.HelpCommand.class)
final class FilesCommands {
    @ParentCommand
    private Aenv aenv;

    @Option(
            names = {"-u", "--user"},
            scope = CommandLine.ScopeType.INHERIT,
            paramLabel = "USER",
            description = "Act as USER in the sandbox (default: its default user).")
    private String user;

    @Command(
            name = "get",
            mixinStandardHelpOptions = true,
            description = {
                "Download a file; LOCAL - (the default) writes it to stdout.",
                "With -r, PATH is a directory and LOCAL (default: .) receives what it",
                "holds, subdirectories included (symbolic links are skipped).",
                "Transfers of 4 MiB or more draw a progress bar when stderr is a terminal."
            })
    int get(
            @Parameters(index = "0", paramLabel = "SANDBOX_ID") String id,
            @Parameters(index = "1", paramLabel = "PATH") String path,
            @Parameters(index = "2", arity = "0..1", paramLabel = "LOCAL") String local,
            @Option(
                            names = {"-r", "--recursive"},
                            description = "Copy the directory PATH into the local directory LOCAL.")
                    boolean recursive)
            throws EnvdException {
        EnvdClient envd = aenv.envd(id);
        if (recursive) {
            return getTree(envd, path, Path.of(local == null ? "." : local));
        }
        if (local == null || local.equals("-")) {
            envd.download(
                    path,
                    user(),
                    length -> progress("get", length).counting(aenv.stdio().out()));
            progress.finish();
            return 0;
        }
        Path target = localTarget(local, path);
        download(envd, path, target, length -> progress("get", length));
        progress.finish();
        return 0;
    }

    @Command(
            name = "put",
            mixinStandardHelpOptions = true,
            description = {
                "Upload LOCAL (- for stdin) to PATH; parent directories are created, a",
                "file is replaced. With -r, LOCAL is a directory and PATH receives what it",
                "holds, subdirectories included (symbolic links are skipped).",
                "Transfers of 4 MiB or more draw a progress bar when stderr is a terminal."
            })
    int put(
            @Parameters(index = "0", paramLabel = "SANDBOX_ID") String id,
            @Parameters(index = "1", paramLabel = "LOCAL") String local,
            @Parameters(index = "2", paramLabel = "PATH") String path,
            @Option(
                            names = {"-r", "--recursive"},
                            description = "Copy the local directory LOCAL into the directory PATH.")
                    boolean recursive)
            throws EnvdException {
        if (recursive) {
            Path dir = Path.of(local);
            if (!Files.isDirectory(dir)) {
                throw new IllegalArgumentException("no such local directory: " + local);
            }
            return putTree(aenv.envd(id), dir, path);
        }
        String written;
        if (local.equals("-")) {
            written = aenv.envd(id).upload(path, user(), -1, () -> aenv.stdio().in());
        } else {
            Path file = Path.of(local);
            if (Files.isDirectory(file)) {
                throw new IllegalArgumentException(local + " is a directory (put -r copies a directory)");
            }
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException("no such local file: " + local);
            }
            written = upload(aenv.envd(id), file, path, progress("put", size(file)));
        }
        progress.finish();
        return aenv.say("wrote " + Printable.of(written));
    }

    /** Uploads every regular file under {@code dir} to the same place under {@code remote}; empty directories are made. */
    private int putTree(EnvdClient envd, Path dir, String remote) throws EnvdException {
        List<Path> files = new ArrayList<>();
        List<Path> emptyDirs = new ArrayList<>();
        long total = 0;
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted()::iterator) {
                if (Files.isSymbolicLink(p)) {
                    aenv.err().println("aenv: skipped symbolic link " + Printable.of(p.toString()));
                } else if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    files.add(p);
                    total += Files.size(p);
                } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) && !p.equals(dir) && isEmpty(p)) {
                    emptyDirs.add(p);
                }
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            throw new ApiException(
                    0,
                    "cannot read " + dir + ": "
                            + ApiException.describe(e instanceof java.io.UncheckedIOException u ? u.getCause() : e));
        }
        aenv.err().flush();
        Progress bar = progress("put", total);
        for (Path file : files) {
            upload(envd, file, remoteChild(remote, dir.relativize(file)), bar);
        }
        for (Path empty : emptyDirs) {
            try {
                envd.unary(
                        "filesystem.Filesystem/MakeDir",
                        MakeDirRequest.newBuilder()
                                .setPath(remoteChild(remote, dir.relativize(empty)))
                                .build(),
                        MakeDirResponse.getDefaultInstance(),
                        user());
            } catch (RpcException e) {
                if (e.code() != ConnectCode.ALREADY_EXISTS) {
                    throw e;
                }
            }
        }
        bar.finish();
        return aenv.say("wrote " + files.size() + " files (" + Progress.size(total) + ") to " + Printable.of(remote));
    }

    /** Downloads every regular file under the sandbox directory {@code remote} to the same place under {@code dir}. */
    private int getTree(EnvdClient envd, String remote, Path dir) throws EnvdException {
        EntryInfo top = envd.unary(
                        "filesystem.Filesystem/Stat",
                        StatRequest.newBuilder().setPath(remote).build(),
                        StatResponse.getDefaultInstance(),
                        user())
                .getEntry();
        if (top.getType() != FileType.FILE_TYPE_DIRECTORY) {
            throw new IllegalArgumentException(
                    remote + " is not a directory in the sandbox (get without -r copies a file)");
        }
        String root = top.getPath().endsWith("/") ? top.getPath() : top.getPath() + "/";
        List<EntryInfo> entries = envd.unary(
                        "filesystem.Filesystem/ListDir",
                        ListDirRequest.newBuilder()
                                .setPath(top.getPath())
                                .setDepth(TREE_DEPTH)
                                .build(),
                        ListDirResponse.getDefaultInstance(),
                        user())
                .getEntriesList();
        Path base = dir.toAbsolutePath().normalize();
        long total = 0;
        List<Map.Entry<EntryInfo, Path>> files = new ArrayList<>();
        try {
            Files.createDirectories(base);
            for (EntryInfo e : entries) {
                Path target = localChild(base, root, e.getPath());
                switch (e.getType()) {
                    case FILE_TYPE_DIRECTORY -> Files.createDirectories(target);
                    case FILE_TYPE_FILE -> {
                        Files.createDirectories(target.getParent());
                        files.add(Map.entry(e, target));
                        total += e.getSize();
                    }
                    default ->
                        aenv.err()
                                .println("aenv: skipped "
                                        + (e.getType() == FileType.FILE_TYPE_SYMLINK ? "symbolic link " : "")
                                        + Printable.of(e.getPath()));
                }
            }
        } catch (IOException e) {
            throw new ApiException(0, "cannot write " + dir + ": " + ApiException.describe(e));
        }
        aenv.err().flush();
        Progress bar = progress("get", total);
        for (Map.Entry<EntryInfo, Path> file : files) {
            download(envd, file.getKey().getPath(), file.getValue(), length -> bar);
        }
        bar.finish();
        return aenv.say(
                "got " + files.size() + " files (" + Progress.size(total) + ") into " + Printable.of(dir.toString()));
    }

    /** The sandbox path of {@code relative} (a local relative path) under {@code remote}. */
    private static String remoteChild(String remote, Path relative) {
        StringBuilder joined =
                new StringBuilder(remote.endsWith("/") ? remote.substring(0, remote.length() - 1) : remote);
        for (Path part : relative) {
            joined.append('/').append(part);
        }
        return joined.toString();
    }

    /**
     * Where the sandbox entry {@code path} (under {@code root}, which ends with /) goes under {@code base}; a path the
     * sandbox reports outside the directory asked for, or with . or .. in it, is refused.
     */
    static Path localChild(Path base, String root, String path) {
        if (!path.startsWith(root) || path.length() == root.length()) {
            throw new ApiException(
                    0, "the sandbox listed " + Printable.of(path) + ", which is not under " + Printable.of(root));
        }
        Path target = base;
        for (String part : path.substring(root.length()).split("/")) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                throw new ApiException(
                        0, "the sandbox listed a path with an empty, . or .. part: " + Printable.of(path));
            }
            target = target.resolve(part);
        }
        if (!target.normalize().startsWith(base)) {
            throw new ApiException(
                    0, "the sandbox listed a path outside " + Printable.of(root) + ": " + Printable.of(path));
        }
        return target;
    }

    /** Downloads into a temporary file next to {@code target}, moved into place only when complete. */
    private void download(EnvdClient envd, String path, Path target, LongFunction<Progress> bar) throws EnvdException {
        Path partial;
        try {
            partial = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".part");
        } catch (IOException e) {
            throw new ApiException(0, "cannot write " + target + ": " + ApiException.describe(e));
        }
        try {
            try (OutputStream out = Files.newOutputStream(partial)) {
                envd.download(path, user(), length -> bar.apply(length).counting(out));
            }
            move(partial, target);
        } catch (IOException e) {
            throw new ApiException(0, "cannot write " + target + ": " + ApiException.describe(e));
        } finally {
            try {
                Files.deleteIfExists(partial);
            } catch (IOException ignored) {
                // best effort: the download already failed or the file was moved
            }
        }
    }

    /** Uploads the file's bytes, with its length (envd gets a Content-Length), counted as they are sent. */
    private String upload(EnvdClient envd, Path file, String remote, Progress bar) throws EnvdException {
        return envd.upload(remote, user(), size(file), () -> {
            try {
                return bar.counting(Files.newInputStream(file));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + file + ": " + ApiException.describe(e));
        }
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (Stream<Path> children = Files.list(dir)) {
            return children.findAny().isEmpty();
        }
    }

    /** The single-file transfer's bar, made when its size is known. */
    private Progress progress = Progress.NONE;

    private Progress progress(String label, long total) {
        progress = Progress.of(aenv.stdio(), aenv.err(), label, total);
        return progress;
    }

    @Command(
            name = "ls",
            mixinStandardHelpOptions = true,
            description = "List a directory (PATH defaults to the user's home).")
    int ls(
            @Parameters(index = "0", paramLabel = "SANDBOX_ID") String id,
            @Parameters(index = "1", arity = "0..1", defaultValue = ".", paramLabel = "PATH") String path,
            @Option(
                            names = "--depth",
                            defaultValue = "1",
                            paramLabel = "N",
                            description = "Levels to descend (default: 1).")
                    int depth)
            throws EnvdException {
        if (depth < 1) {
            throw new IllegalArgumentException("--depth must be >= 1");
        }
        ListDirResponse listing = aenv.envd(id)
                .unary(
                        "filesystem.Filesystem/ListDir",
                        ListDirRequest.newBuilder()
                                .setPath(path)
                                .setDepth(depth)
                                .build(),
                        ListDirResponse.getDefaultInstance(),
                        user());
        if (aenv.output() == Aenv.Output.json) {
            try {
                // a filesystem.ListDir answer (a Connect message): printed in its proto3 JSON mapping, as envd sends it
                aenv.out().println(JsonFormat.printer().print(listing));
            } catch (InvalidProtocolBufferException e) {
                throw new IllegalStateException("cannot print the listing", e);
            }
            aenv.out().flush();
            return 0;
        }
        Table table = new Table("TYPE", "PERMISSIONS", "OWNER", "GROUP", "SIZE", "MODIFIED", "PATH");
        for (EntryInfo e : listing.getEntriesList()) {
            String name = e.getPath() + (e.hasSymlinkTarget() ? " -> " + e.getSymlinkTarget() : "");
            table.row(
                    type(e.getType()),
                    e.getPermissions(),
                    e.getOwner(),
                    e.getGroup(),
                    e.getSize(),
                    e.hasModifiedTime()
                            ? Instant.ofEpochSecond(e.getModifiedTime().getSeconds())
                            : null,
                    name);
        }
        table.print(aenv.out());
        return 0;
    }

    @Command(name = "rm", mixinStandardHelpOptions = true, description = "Remove a file or a directory (recursively).")
    int rm(
            @Parameters(index = "0", paramLabel = "SANDBOX_ID") String id,
            @Parameters(index = "1", paramLabel = "PATH") String path)
            throws EnvdException {
        aenv.envd(id)
                .unary(
                        "filesystem.Filesystem/Remove",
                        RemoveRequest.newBuilder().setPath(path).build(),
                        RemoveResponse.getDefaultInstance(),
                        user());
        return aenv.say("removed " + Printable.of(path));
    }

    /** Deep enough for any tree (envd bounds it too). */
    private static final int TREE_DEPTH = 1 << 16;

    private Optional<String> user() {
        return Optional.ofNullable(user);
    }

    private static String type(FileType type) {
        return switch (type) {
            case FILE_TYPE_FILE -> "file";
            case FILE_TYPE_DIRECTORY -> "dir";
            case FILE_TYPE_SYMLINK -> "link";
            case FILE_TYPE_UNSPECIFIED, UNRECOGNIZED -> "?";
        };
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Where a download of remote {@code path} goes: {@code local}, or in it under the remote name when a directory. */
    static Path localTarget(String local, String path) {
        Path target = Path.of(local).toAbsolutePath();
        if (!Files.isDirectory(target)) {
            return target;
        }
        Path name = Path.of(path).getFileName();
        if (name == null) {
            throw new IllegalArgumentException("name the local file: " + path + " has no file name");
        }
        return target.resolve(name.toString());
    }
}
