package io.agentenv.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.FileType;
import io.agentenv.envd.protocol.filesystem.ListDirRequest;
import io.agentenv.envd.protocol.filesystem.ListDirResponse;
import io.agentenv.envd.protocol.filesystem.RemoveRequest;
import io.agentenv.envd.protocol.filesystem.RemoveResponse;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.http.HttpRequest;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code aenv files}: copy files in and out of a sandbox and list or remove them, through envd's {@code /files} and
 * filesystem RPCs. Relative sandbox paths are relative to the user's home.
 */
@Command(name = "files", mixinStandardHelpOptions = true, description = "Copy files to and from a sandbox, list and remove them.",
        subcommands = CommandLine.HelpCommand.class)
final class FilesCommands {
    @ParentCommand
    private Aenv aenv;

    @Option(names = {"-u", "--user"}, scope = CommandLine.ScopeType.INHERIT, paramLabel = "USER",
            description = "Act as USER in the sandbox (default: its default user).")
    private String user;

    @Command(name = "get", mixinStandardHelpOptions = true, description = "Download a file; LOCAL - (the default) writes it to stdout.")
    int get(@Parameters(index = "0", paramLabel = "SANDBOX_ID") String id,
            @Parameters(index = "1", paramLabel = "PATH") String path,
            @Parameters(index = "2", arity = "0..1", defaultValue = "-", paramLabel = "LOCAL") String local) {
        EnvdClient envd = aenv.envd(id);
        if (local.equals("-")) {
            envd.download(path, user(), aenv.stdio().out());
            return 0;
        }
        // into a temporary file next to the target, moved into place only when complete
        Path target = Path.of(local).toAbsolutePath();
        if (Files.isDirectory(target)) {
            Path name = Path.of(path).getFileName();
            if (name == null) {
                throw new IllegalArgumentException("name the local file: " + path + " has no file name");
            }
            target = target.resolve(name.toString());
        }
        Path partial;
        try {
            partial = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".part");
        } catch (IOException e) {
            throw new ApiException(0, "cannot write " + local + ": " + EnvdClient.describe(e));
        }
        try {
            try (OutputStream out = Files.newOutputStream(partial)) {
                envd.download(path, user(), out);
            }
            move(partial, target);
        } catch (IOException e) {
            throw new ApiException(0, "cannot write " + local + ": " + EnvdClient.describe(e));
        } finally {
            try {
                Files.deleteIfExists(partial);
            } catch (IOException ignored) {
                // best effort: the download already failed or the file was moved
            }
        }
        return 0;
    }

    @Command(name = "put", mixinStandardHelpOptions = true, description = "Upload LOCAL (- for stdin) to PATH; parent directories are created, a file is replaced.")
    int put(@Parameters(index = "0", paramLabel = "SANDBOX_ID") String id,
            @Parameters(index = "1", paramLabel = "LOCAL") String local,
            @Parameters(index = "2", paramLabel = "PATH") String path) {
        HttpRequest.BodyPublisher body;
        if (local.equals("-")) {
            body = HttpRequest.BodyPublishers.ofInputStream(() -> aenv.stdio().in());
        } else {
            try {
                body = HttpRequest.BodyPublishers.ofFile(Path.of(local));
            } catch (FileNotFoundException e) {
                throw new IllegalArgumentException("no such local file: " + local);
            }
            if (Files.isDirectory(Path.of(local))) {
                throw new IllegalArgumentException(local + " is a directory (put copies one file)");
            }
        }
        String written = aenv.envd(id).upload(path, user(), body);
        return aenv.say("wrote " + Printable.of(written));
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List a directory (PATH defaults to the user's home).")
    int ls(@Parameters(index = "0", paramLabel = "SANDBOX_ID") String id,
           @Parameters(index = "1", arity = "0..1", defaultValue = ".", paramLabel = "PATH") String path,
           @Option(names = "--depth", defaultValue = "1", paramLabel = "N", description = "Levels to descend (default: 1).") int depth) {
        if (depth < 1) {
            throw new IllegalArgumentException("--depth must be >= 1");
        }
        ListDirResponse listing = aenv.envd(id).unary("filesystem.Filesystem/ListDir",
                ListDirRequest.newBuilder().setPath(path).setDepth(depth).build(), ListDirResponse.getDefaultInstance(), user());
        if (aenv.output() == Aenv.Output.json) {
            try {
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
            table.row(type(e.getType()), e.getPermissions(), e.getOwner(), e.getGroup(), e.getSize(),
                    e.hasModifiedTime() ? Instant.ofEpochSecond(e.getModifiedTime().getSeconds()) : null, name);
        }
        table.print(aenv.out());
        return 0;
    }

    @Command(name = "rm", mixinStandardHelpOptions = true, description = "Remove a file or a directory (recursively).")
    int rm(@Parameters(index = "0", paramLabel = "SANDBOX_ID") String id,
           @Parameters(index = "1", paramLabel = "PATH") String path) {
        aenv.envd(id).unary("filesystem.Filesystem/Remove", RemoveRequest.newBuilder().setPath(path).build(),
                RemoveResponse.getDefaultInstance(), user());
        return aenv.say("removed " + Printable.of(path));
    }

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
}
