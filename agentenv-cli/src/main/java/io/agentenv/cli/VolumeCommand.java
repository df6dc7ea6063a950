package io.agentenv.cli;

import io.agentenv.api.model.NewVolume;
import io.agentenv.api.model.Volume;
import io.agentenv.api.model.VolumeAndToken;
import io.agentenv.api.model.VolumeEntryStat;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code aenv volume}: persistent volumes through the Volume API. {@code create}, {@code ls}, {@code info} and
 * {@code rm} manage them with the API key; {@code put}, {@code get}, {@code ls VOLUME}, {@code mkdir} and
 * {@code delete-path} reach their files without a sandbox, through the content routes with the volume's token (fetched
 * with {@code GET /volumes/{id}}, shown only by {@code info --token} and {@code -o json}). A volume is named by its id
 * or its name: a name is looked up in {@code GET /volumes}, an id that matches exactly wins.
 */
@Command(
        name = "volume",
        mixinStandardHelpOptions = true,
        description = {
            "Manage persistent volumes and the files in them, without a sandbox.",
            "A volume is named by its name or its id. Sandboxes mount volumes with",
            "aenv create TEMPLATE --volume NAME:/PATH[:ro] (or aenv start)."
        },
        subcommands = {
            VolumeCommand.Create.class,
            VolumeCommand.ListVolumes.class,
            VolumeCommand.Info.class,
            VolumeCommand.Remove.class,
            VolumeCommand.Put.class,
            VolumeCommand.Get.class,
            VolumeCommand.MakeDir.class,
            VolumeCommand.DeletePath.class,
            CommandLine.HelpCommand.class
        })
final class VolumeCommand implements Callable<Integer> {
    @ParentCommand
    Aenv aenv;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(
                spec.commandLine(), "name a subcommand: create, ls, info, rm, put, get, mkdir or delete-path");
    }

    /** The volume {@code nameOrId} names among {@code volumes}: the one with that id, else the one with that name. */
    static Volume resolve(List<Volume> volumes, String nameOrId) {
        return volumes.stream()
                .filter(v -> v.volumeID().equals(nameOrId))
                .findFirst()
                .or(() ->
                        volumes.stream().filter(v -> v.name().equals(nameOrId)).findFirst())
                .orElseThrow(() -> notFound(nameOrId));
    }

    /** The volume with its token. */
    VolumeAndToken volume(String nameOrId) {
        ApiClient client = aenv.client();
        String id = resolve(client.volumes(), nameOrId).volumeID();
        return client.volume(id).orElseThrow(() -> notFound(nameOrId));
    }

    /** The content routes of the volume {@code nameOrId}. */
    VolumeContentClient content(String nameOrId) {
        return aenv.client().volumeContent(volume(nameOrId));
    }

    private static ApiException notFound(String nameOrId) {
        return new ApiException(404, "volume " + nameOrId + " not found");
    }

    @Command(
            name = "create",
            mixinStandardHelpOptions = true,
            description = "Create a volume and print its id (-o json: with its token).")
    static final class Create implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(paramLabel = "NAME", description = "1 to 63 lowercase letters, digits, - and _.")
        String name;

        @Option(names = "--size", paramLabel = "MiB", description = "Its size (default: the server's).")
        Integer size;

        @Override
        public Integer call() {
            if (size != null && size < 1) {
                throw new IllegalArgumentException("--size must be at least 1 (MiB)");
            }
            Aenv aenv = parent.aenv;
            VolumeAndToken volume = aenv.client().createVolume(new NewVolume(name, size));
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(volume);
            }
            aenv.out().println(volume.volumeID());
            aenv.out().flush();
            return 0;
        }
    }

    @Command(
            name = "ls",
            aliases = "list",
            mixinStandardHelpOptions = true,
            description = "List volumes; with VOLUME, the files under PATH in it (default: its root).")
    static final class ListVolumes implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(index = "0", arity = "0..1", paramLabel = "VOLUME", description = "A volume's name or id.")
        String volume;

        @Parameters(index = "1", arity = "0..1", paramLabel = "PATH", description = "A directory in it (default: /).")
        String path;

        @Option(names = "--depth", paramLabel = "N", description = "Levels to descend, 1 to 32 (default: 1).")
        Integer depth;

        @Override
        public Integer call() {
            Aenv aenv = parent.aenv;
            if (volume == null) {
                if (depth != null) {
                    throw new IllegalArgumentException("--depth lists files: name the VOLUME");
                }
                List<Volume> volumes = aenv.client().volumes();
                if (aenv.output() == Aenv.Output.json) {
                    return aenv.printJson(volumes);
                }
                Table table = new Table("VOLUME ID", "NAME");
                volumes.forEach(v -> table.row(v.volumeID(), v.name()));
                table.print(aenv.out());
                return 0;
            }
            int levels = depth == null ? 1 : depth;
            if (levels < 1 || levels > 32) {
                throw new IllegalArgumentException("--depth must be between 1 and 32");
            }
            List<VolumeEntryStat> entries = parent.content(volume).list(path == null ? "/" : path, levels);
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(entries);
            }
            Table table = new Table("TYPE", "PERMISSIONS", "UID", "GID", "SIZE", "MODIFIED", "PATH");
            for (VolumeEntryStat e : entries) {
                table.row(
                        type(e.type()),
                        permissions(e.type(), e.mode()),
                        e.uid(),
                        e.gid(),
                        e.size(),
                        e.mtime() == null ? null : e.mtime().truncatedTo(ChronoUnit.SECONDS),
                        e.path() + (e.target() == null ? "" : " -> " + e.target()));
            }
            table.print(aenv.out());
            return 0;
        }
    }

    @Command(
            name = "info",
            mixinStandardHelpOptions = true,
            description = {
                "Show a volume: its id, name and size.",
                "Its token (for the content API and the E2B SDK) only with --token or -o json."
            })
    static final class Info implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(paramLabel = "NAME|ID")
        String volume;

        @Option(names = "--token", description = "Print only the volume's token.")
        boolean token;

        @Override
        public Integer call() {
            Aenv aenv = parent.aenv;
            VolumeAndToken v = parent.volume(volume);
            if (token) {
                aenv.out().println(v.token());
                aenv.out().flush();
                return 0;
            }
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(v);
            }
            new Table("FIELD", "VALUE")
                    .row("volume id", v.volumeID())
                    .row("name", v.name())
                    .row("size MiB", v.sizeMiB())
                    .print(aenv.out());
            return 0;
        }
    }

    @Command(
            name = "rm",
            aliases = "delete",
            mixinStandardHelpOptions = true,
            description = {
                "Delete volumes with all their files.",
                "One that a sandbox mounts is refused; the others are still deleted, and",
                "the exit code is 1."
            })
    static final class Remove implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(arity = "1..*", paramLabel = "NAME|ID")
        List<String> volumes;

        @Override
        public Integer call() {
            Aenv aenv = parent.aenv;
            ApiClient client = aenv.client();
            List<Volume> all = client.volumes();
            List<Volume> deleted = new ArrayList<>();
            boolean failed = false;
            for (String nameOrId : volumes) {
                try {
                    Volume v = resolve(all, nameOrId);
                    if (!client.deleteVolume(v.volumeID())) {
                        throw notFound(nameOrId);
                    }
                    deleted.add(v);
                    if (aenv.output() != Aenv.Output.json) {
                        aenv.out().println("deleted volume " + Printable.of(v.name()) + " (" + v.volumeID() + ")");
                        aenv.out().flush();
                    }
                } catch (ApiException e) {
                    aenv.err().println("error: " + Printable.of(e.getMessage()));
                    aenv.err().flush();
                    failed = true;
                }
            }
            if (aenv.output() == Aenv.Output.json) {
                aenv.printJson(deleted);
            }
            return failed ? 1 : 0;
        }
    }

    @Command(
            name = "put",
            mixinStandardHelpOptions = true,
            description = {
                "Upload LOCAL (- for stdin) to PATH in the volume.",
                "Parent directories are made, a file is replaced. Transfers of 4 MiB or",
                "more draw a progress bar when stderr is a terminal."
            })
    static final class Put implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;

        @Parameters(index = "1", paramLabel = "LOCAL")
        String local;

        @Parameters(index = "2", paramLabel = "PATH")
        String path;

        @Override
        public Integer call() {
            Aenv aenv = parent.aenv;
            VolumeEntryStat written;
            if (local.equals("-")) {
                written = parent.content(volume).write(path, -1, aenv.stdio().in());
            } else {
                Path file = Path.of(local);
                if (Files.isDirectory(file)) {
                    throw new IllegalArgumentException(local + " is a directory (put copies one file)");
                }
                if (!Files.isRegularFile(file)) {
                    throw new IllegalArgumentException("no such local file: " + local);
                }
                VolumeContentClient content = parent.content(volume);
                try {
                    long size = Files.size(file);
                    Progress bar = Progress.of(aenv.stdio(), aenv.err(), "put", size);
                    try (InputStream in = bar.counting(Files.newInputStream(file))) {
                        written = content.write(path, size, in);
                    }
                    bar.finish();
                } catch (IOException e) {
                    throw new IllegalArgumentException("cannot read " + local + ": " + ApiException.describe(e));
                }
            }
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(written);
            }
            return aenv.say("wrote " + Printable.of(written.path()) + " (" + Progress.size(written.size()) + ")");
        }
    }

    @Command(
            name = "get",
            mixinStandardHelpOptions = true,
            description = {
                "Download PATH from the volume (to stdout unless LOCAL names a file).",
                "A LOCAL directory receives it under its name; LOCAL - is stdout.",
                "Transfers of 4 MiB or more draw a progress bar when stderr is a terminal."
            })
    static final class Get implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;

        @Parameters(index = "1", paramLabel = "PATH")
        String path;

        @Parameters(index = "2", arity = "0..1", paramLabel = "LOCAL")
        String local;

        @Override
        public Integer call() {
            Aenv aenv = parent.aenv;
            VolumeContentClient content = parent.content(volume);
            Progress[] bar = {Progress.NONE};
            if (local == null || local.equals("-")) {
                content.read(path, length -> {
                    bar[0] = Progress.of(aenv.stdio(), aenv.err(), "get", length);
                    return bar[0].counting(aenv.stdio().out());
                });
                bar[0].finish();
                return 0;
            }
            Path target = FilesCommands.localTarget(local, path);
            download(aenv, content, target, bar);
            bar[0].finish();
            return 0;
        }

        /** Downloads into a temporary file next to {@code target}, moved into place only when complete. */
        private void download(Aenv aenv, VolumeContentClient content, Path target, Progress[] bar) {
            Path partial;
            try {
                partial = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".part");
            } catch (IOException e) {
                throw new ApiException(0, "cannot write " + target + ": " + ApiException.describe(e));
            }
            try {
                try (OutputStream out = Files.newOutputStream(partial)) {
                    content.read(path, length -> {
                        bar[0] = Progress.of(aenv.stdio(), aenv.err(), "get", length);
                        return bar[0].counting(out);
                    });
                }
                try {
                    Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING);
                }
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
    }

    @Command(name = "mkdir", mixinStandardHelpOptions = true, description = "Make a directory in the volume.")
    static final class MakeDir implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;

        @Parameters(index = "1", paramLabel = "PATH")
        String path;

        @Option(
                names = {"-p", "--parents"},
                description = "Make missing parents too; a directory already there is fine.")
        boolean parents;

        @Override
        public Integer call() {
            Aenv aenv = parent.aenv;
            VolumeEntryStat made = parent.content(volume).makeDir(path, parents);
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(made);
            }
            return aenv.say("made " + Printable.of(made.path()));
        }
    }

    @Command(
            name = "delete-path",
            aliases = "rm-path",
            mixinStandardHelpOptions = true,
            description = "Remove a file, a link or a directory (with everything below it) from the volume.")
    static final class DeletePath implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;

        @Parameters(index = "1", paramLabel = "PATH")
        String path;

        @Override
        public Integer call() {
            parent.content(volume).remove(path);
            return parent.aenv.say("removed " + Printable.of(path));
        }
    }

    private static String type(String type) {
        return switch (type == null ? "" : type) {
            case "file" -> "file";
            case "directory" -> "dir";
            case "symlink" -> "link";
            default -> "?";
        };
    }

    /** {@code drwxr-xr-x}: the kind and the permission bits, as {@code ls -l} shows them. */
    static String permissions(String type, int mode) {
        StringBuilder s = new StringBuilder(10);
        s.append(
                switch (type == null ? "" : type) {
                    case "directory" -> 'd';
                    case "symlink" -> 'l';
                    case "file" -> '-';
                    default -> '?';
                });
        String rwx = "rwx";
        for (int bit = 8; bit >= 0; bit--) {
            s.append((mode & (1 << bit)) != 0 ? rwx.charAt(2 - bit % 3) : '-');
        }
        return s.toString();
    }
}
