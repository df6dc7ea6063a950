package io.agentenv.cli;

import io.agentenv.api.model.AutoResume;
import io.agentenv.api.model.ListedSandbox;
import io.agentenv.api.model.NewSandboxV2;
import io.agentenv.api.model.Sandbox;
import io.agentenv.api.model.SandboxDetail;
import io.agentenv.api.model.SandboxForkResult;
import io.agentenv.api.model.SnapshotInfo;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * The control-plane commands on sandboxes and snapshots: {@code create}, {@code list}, {@code info}, {@code kill},
 * {@code pause}, {@code connect}, {@code set-timeout}, {@code fork}, {@code snapshot}, {@code snapshots}. Each is a
 * class of its own (options as fields), so that {@link Aenv} can build the model of the one command a line names.
 */
final class SandboxCommands {
    private SandboxCommands() {}

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a sandbox and print its id.")
    static final class Create implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Parameters(
                index = "0",
                defaultValue = "base",
                paramLabel = "TEMPLATE",
                description = "Template id, snapshot id or alias (default: base).")
        private String template;

        @Option(names = "--timeout", paramLabel = "SECONDS", description = "TTL (server default: 300).")
        private Integer timeout;

        @Option(names = "--metadata", paramLabel = "KEY=VALUE", description = "Metadata (repeatable).")
        private Map<String, String> metadata;

        @Option(names = "--env", paramLabel = "KEY=VALUE", description = "Environment variable (repeatable).")
        private Map<String, String> envVars;

        @Option(names = "--on-timeout", paramLabel = "ACTION", description = "kill (default) or pause.")
        private String onTimeout;

        @Option(names = "--auto-resume", description = "Resume on incoming traffic while paused.")
        private boolean autoResume;

        @Option(names = "--no-internet", description = "Deny outbound internet access.")
        private boolean noInternet;

        @Option(
                names = "--volume",
                paramLabel = VolumeMountOption.SHAPE,
                description = "Mount a volume (name or id) at /PATH, read-only with :ro (repeatable).")
        private List<String> volumes;

        @Override
        public Integer call() {
            List<VolumeMountOption> mounts = VolumeMountOption.parseAll(volumes);
            Boolean autoPause = switch (onTimeout == null ? "" : onTimeout) {
                case "" -> null;
                case "kill" -> false;
                case "pause" -> true;
                default -> throw new IllegalArgumentException("--on-timeout must be kill or pause");
            };
            NewSandboxV2 body = new NewSandboxV2(
                    template,
                    timeout,
                    autoPause,
                    null,
                    autoResume ? new AutoResume(true) : null,
                    noInternet ? Boolean.FALSE : null,
                    null,
                    metadata,
                    envVars,
                    null);
            Sandbox sandbox = aenv.client().create(body, mounts);
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(sandbox);
            }
            aenv.out().println(sandbox.sandboxID());
            aenv.out().flush();
            return 0;
        }
    }

    @Command(
            name = "list",
            mixinStandardHelpOptions = true,
            aliases = "ls",
            description = "List sandboxes (running and paused unless --state).")
    static final class ListSandboxes implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Option(names = "--state", paramLabel = "STATES", description = "running, paused or running,paused.")
        private String state;

        @Option(
                names = "--metadata",
                paramLabel = "KEY=VALUE",
                description = "Only sandboxes with this metadata (repeatable, AND).")
        private Map<String, String> metadata;

        @Override
        public Integer call() {
            List<ListedSandbox> items = aenv.client()
                    .list(Optional.ofNullable(state), metadata == null ? Map.of() : new LinkedHashMap<>(metadata));
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(items);
            }
            Table table =
                    new Table("SANDBOX ID", "TEMPLATE", "STATE", "STARTED", "ENDS", "CPU", "MEMORY MB", "METADATA");
            for (ListedSandbox s : items) {
                table.row(
                        s.sandboxID(),
                        s.alias() != null ? s.alias() : s.templateID(),
                        s.state().wire(),
                        s.startedAt(),
                        s.endAt(),
                        s.cpuCount(),
                        s.memoryMB(),
                        s.metadata().isEmpty() ? "-" : s.metadata());
            }
            table.print(aenv.out());
            return 0;
        }
    }

    @Command(name = "info", mixinStandardHelpOptions = true, description = "Show one sandbox.")
    static final class Info implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Parameters(paramLabel = "SANDBOX_ID")
        private String id;

        @Override
        public Integer call() {
            SandboxDetail d = aenv.client().info(id);
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(d);
            }
            new Table("FIELD", "VALUE")
                    .row("sandbox id", d.sandboxID())
                    .row(
                            "template",
                            d.alias() != null && !d.alias().equals(d.templateID())
                                    ? d.alias() + " (" + d.templateID() + ")"
                                    : d.templateID())
                    .row("state", d.state().wire())
                    .row("started", d.startedAt())
                    .row("ends", d.endAt())
                    .row(
                            "on timeout",
                            d.lifecycle() == null
                                    ? null
                                    : d.lifecycle().onTimeout().wire())
                    .row("cpu", d.cpuCount())
                    .row("memory MB", d.memoryMB())
                    .row("disk MB", d.diskSizeMB())
                    .row("metadata", d.metadata().isEmpty() ? "-" : d.metadata())
                    .row("envd version", d.envdVersion())
                    .print(aenv.out());
            return 0;
        }
    }

    @Command(
            name = "kill",
            mixinStandardHelpOptions = true,
            aliases = {"rm", "delete"},
            description = "Kill a sandbox (its state is deleted).")
    static final class Kill implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Parameters(paramLabel = "SANDBOX_ID")
        private String id;

        @Override
        public Integer call() {
            if (!aenv.client().kill(id)) {
                throw new ApiException(404, "sandbox " + id + " not found");
            }
            return aenv.say("killed " + id);
        }
    }

    @Command(name = "pause", mixinStandardHelpOptions = true, description = "Pause a sandbox to disk.")
    static final class Pause implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Parameters(paramLabel = "SANDBOX_ID")
        private String id;

        @Option(names = "--no-memory", description = "Keep only the filesystem.")
        private boolean noMemory;

        @Override
        public Integer call() {
            return aenv.say(aenv.client().pause(id, !noMemory) ? "paused " + id : id + " was already paused");
        }
    }

    @Command(
            name = "connect",
            mixinStandardHelpOptions = true,
            aliases = "resume",
            description = "Resume a paused sandbox, or extend a running one's TTL.")
    static final class Connect implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Parameters(paramLabel = "SANDBOX_ID")
        private String id;

        @Option(names = "--timeout", paramLabel = "SECONDS", description = "TTL from now (server default: 300).")
        private Integer timeout;

        @Override
        public Integer call() {
            ApiClient.Connected connected = aenv.client().connect(id, Optional.ofNullable(timeout));
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(connected.sandbox());
            }
            return aenv.say((connected.resumed() ? "resumed " : "running ") + id);
        }
    }

    @Command(
            name = "set-timeout",
            mixinStandardHelpOptions = true,
            aliases = "timeout",
            description = "Set the TTL to SECONDS from now (may shorten it).")
    static final class SetTimeout implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Parameters(index = "0", paramLabel = "SANDBOX_ID")
        private String id;

        @Parameters(index = "1", paramLabel = "SECONDS")
        private int seconds;

        @Override
        public Integer call() {
            if (seconds < 0) {
                throw new IllegalArgumentException("SECONDS must be >= 0");
            }
            aenv.client().setTimeout(id, seconds);
            return aenv.say("timeout of " + id + " set to " + seconds + " s");
        }
    }

    @Command(
            name = "fork",
            mixinStandardHelpOptions = true,
            description = "Fork a running sandbox into COUNT children.")
    static final class Fork implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Parameters(paramLabel = "SANDBOX_ID")
        private String id;

        @Option(names = "--count", defaultValue = "1", paramLabel = "COUNT", description = "1..100 (default: 1).")
        private int count;

        @Option(names = "--timeout", paramLabel = "SECONDS", description = "Children's TTL (default: the source's).")
        private Integer timeout;

        @Override
        public Integer call() {
            if (count < 1 || count > 100) {
                throw new IllegalArgumentException("--count must be between 1 and 100");
            }
            List<SandboxForkResult> results = aenv.client().fork(id, count, Optional.ofNullable(timeout));
            if (aenv.output() == Aenv.Output.json) {
                aenv.printJson(results);
            } else {
                Table table = new Table("#", "SANDBOX ID", "ERROR");
                for (int i = 0; i < results.size(); i++) {
                    SandboxForkResult r = results.get(i);
                    table.row(
                            i + 1,
                            r.sandbox() == null ? null : r.sandbox().sandboxID(),
                            r.error() == null
                                    ? null
                                    : r.error().code() + " " + r.error().message());
                }
                table.print(aenv.out());
            }
            return results.stream().allMatch(r -> r.sandbox() != null) ? 0 : 1;
        }
    }

    @Command(
            name = "snapshot",
            mixinStandardHelpOptions = true,
            description = "Snapshot a running sandbox; sandboxes can be created from the snapshot id or name.")
    static final class Snapshot implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Parameters(paramLabel = "SANDBOX_ID")
        private String id;

        @Option(names = "--name", paramLabel = "NAME", description = "Alias ([A-Za-z0-9_-]+).")
        private String name;

        @Override
        public Integer call() {
            SnapshotInfo info = aenv.client().snapshot(id, Optional.ofNullable(name));
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(info);
            }
            aenv.out().println(info.snapshotID());
            aenv.out().flush();
            return 0;
        }
    }

    @Command(name = "snapshots", mixinStandardHelpOptions = true, description = "List snapshots.")
    static final class Snapshots implements Callable<Integer> {
        @ParentCommand
        private Aenv aenv;

        @Option(names = "--sandbox-id", paramLabel = "SANDBOX_ID", description = "Only this sandbox's snapshots.")
        private String sandboxId;

        @Override
        public Integer call() {
            List<SnapshotInfo> items = aenv.client().snapshots(Optional.ofNullable(sandboxId));
            if (aenv.output() == Aenv.Output.json) {
                return aenv.printJson(items);
            }
            Table table = new Table("SNAPSHOT ID", "NAMES", "CREATED", "CPU", "MEMORY MB", "DISK MB");
            for (SnapshotInfo s : items) {
                table.row(
                        s.snapshotID(),
                        s.names().isEmpty() ? "-" : String.join(",", s.names()),
                        s.createdAt(),
                        s.cpuCount(),
                        s.memoryMB(),
                        s.diskSizeMB());
            }
            table.print(aenv.out());
            return 0;
        }
    }
}
