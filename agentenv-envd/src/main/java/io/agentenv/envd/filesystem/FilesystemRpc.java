package io.agentenv.envd.filesystem;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.connect.CallContext;
import io.agentenv.envd.connect.ConnectRouter;
import io.agentenv.envd.connect.StreamSender;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.filesystem.CreateWatcherRequest;
import io.agentenv.envd.protocol.filesystem.CreateWatcherResponse;
import io.agentenv.envd.protocol.filesystem.GetWatcherEventsRequest;
import io.agentenv.envd.protocol.filesystem.GetWatcherEventsResponse;
import io.agentenv.envd.protocol.filesystem.ListDirRequest;
import io.agentenv.envd.protocol.filesystem.ListDirResponse;
import io.agentenv.envd.protocol.filesystem.MakeDirRequest;
import io.agentenv.envd.protocol.filesystem.MakeDirResponse;
import io.agentenv.envd.protocol.filesystem.MoveRequest;
import io.agentenv.envd.protocol.filesystem.MoveResponse;
import io.agentenv.envd.protocol.filesystem.RemoveRequest;
import io.agentenv.envd.protocol.filesystem.RemoveResponse;
import io.agentenv.envd.protocol.filesystem.RemoveWatcherRequest;
import io.agentenv.envd.protocol.filesystem.RemoveWatcherResponse;
import io.agentenv.envd.protocol.filesystem.StatRequest;
import io.agentenv.envd.protocol.filesystem.StatResponse;
import io.agentenv.envd.protocol.filesystem.WatchDirRequest;
import io.agentenv.envd.protocol.filesystem.WatchDirResponse;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.users.Accounts;
import io.agentenv.envd.users.UnknownUserException;
import io.agentenv.envd.users.UserAccount;
import io.agentenv.envd.users.UserPaths;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code filesystem.Filesystem} Connect service: resolves each request's paths for the calling user (Basic auth
 * user, else the session's default user) and runs it on {@link LocalFilesystem}, {@link DirectoryWatch} or
 * {@link Watchers}. The only place filesystem errors become Connect codes.
 */
public final class FilesystemRpc {
    private static final Logger log = LoggerFactory.getLogger(FilesystemRpc.class);
    private static final String SERVICE = "filesystem.Filesystem/";

    private final LocalFilesystem filesystem;
    private final Watchers watchers;
    private final WatchHub hub;
    private final Accounts accounts;
    private final Session session;

    public FilesystemRpc(
            LocalFilesystem filesystem, WatchHub hub, Watchers watchers, Accounts accounts, Session session) {
        this.filesystem = requireNonNull(filesystem, "filesystem is null");
        this.hub = requireNonNull(hub, "hub is null");
        this.watchers = requireNonNull(watchers, "watchers is null");
        this.accounts = requireNonNull(accounts, "accounts is null");
        this.session = requireNonNull(session, "session is null");
    }

    /** Registers the nine RPCs. */
    public void register(ConnectRouter router) {
        router.unary(SERVICE + "Stat", StatRequest.getDefaultInstance(), this::stat)
                .unary(SERVICE + "ListDir", ListDirRequest.getDefaultInstance(), this::listDir)
                .unary(SERVICE + "MakeDir", MakeDirRequest.getDefaultInstance(), this::makeDir)
                .unary(SERVICE + "Move", MoveRequest.getDefaultInstance(), this::move)
                .unary(SERVICE + "Remove", RemoveRequest.getDefaultInstance(), this::remove)
                .serverStream(SERVICE + "WatchDir", WatchDirRequest.getDefaultInstance(), this::watchDir)
                .unary(SERVICE + "CreateWatcher", CreateWatcherRequest.getDefaultInstance(), this::createWatcher)
                .unary(
                        SERVICE + "GetWatcherEvents",
                        GetWatcherEventsRequest.getDefaultInstance(),
                        this::getWatcherEvents)
                .unary(SERVICE + "RemoveWatcher", RemoveWatcherRequest.getDefaultInstance(), this::removeWatcher);
    }

    StatResponse stat(StatRequest request, CallContext call) {
        Path path = resolve(request.getPath(), user(call));
        return run(() -> StatResponse.newBuilder()
                .setEntry(EntryProtos.toProto(filesystem.stat(path)))
                .build());
    }

    ListDirResponse listDir(ListDirRequest request, CallContext call) {
        Path path = resolve(request.getPath(), user(call));
        int depth = request.getDepth() < 0 ? Integer.MAX_VALUE : request.getDepth(); // uint32 above 2^31
        return run(() -> {
            ListDirResponse.Builder out = ListDirResponse.newBuilder();
            for (Entry entry : filesystem.listDir(path, depth)) {
                out.addEntries(EntryProtos.toProto(entry));
            }
            return out.build();
        });
    }

    MakeDirResponse makeDir(MakeDirRequest request, CallContext call) {
        UserAccount user = user(call);
        Path path = resolve(request.getPath(), user);
        return run(() -> MakeDirResponse.newBuilder()
                .setEntry(EntryProtos.toProto(filesystem.makeDir(path, ownership(user))))
                .build());
    }

    MoveResponse move(MoveRequest request, CallContext call) {
        UserAccount user = user(call);
        Path source = resolve(request.getSource(), user);
        Path destination = resolve(request.getDestination(), user);
        return run(() -> MoveResponse.newBuilder()
                .setEntry(EntryProtos.toProto(filesystem.move(source, destination, ownership(user))))
                .build());
    }

    RemoveResponse remove(RemoveRequest request, CallContext call) {
        Path path = resolve(request.getPath(), user(call));
        return run(() -> {
            filesystem.remove(path);
            return RemoveResponse.getDefaultInstance();
        });
    }

    void watchDir(WatchDirRequest request, CallContext call, StreamSender<WatchDirResponse> out)
            throws InterruptedException {
        Path path = resolve(request.getPath(), user(call));
        WatchOptions options =
                options(request.getRecursive(), request.getIncludeEntry(), request.getAllowNetworkMounts());
        try (DirectoryWatch watch = run(() -> DirectoryWatch.start(path, options, hub))) {
            out.send(WatchDirResponse.newBuilder()
                    .setStart(WatchDirResponse.StartEvent.getDefaultInstance())
                    .build());
            while (true) {
                Duration wait = call.keepaliveInterval();
                if (call.deadline().isPresent()) {
                    Duration left =
                            Duration.between(Instant.now(), call.deadline().get());
                    if (left.isNegative() || left.isZero()) {
                        throw new RpcException(
                                ConnectCode.DEADLINE_EXCEEDED, "watch of '" + path + "' reached its timeout");
                    }
                    wait = left.compareTo(wait) < 0 ? left : wait;
                }
                List<FsEvent> events = watch.poll(wait);
                if (events.isEmpty()) {
                    if (call.deadline().isEmpty()
                            || Instant.now().isBefore(call.deadline().get())) {
                        out.send(WatchDirResponse.newBuilder()
                                .setKeepalive(WatchDirResponse.KeepAlive.getDefaultInstance())
                                .build());
                    }
                    continue;
                }
                for (FsEvent event : events) {
                    out.send(WatchDirResponse.newBuilder()
                            .setFilesystem(EntryProtos.toProto(event))
                            .build());
                }
            }
        } catch (IOException | ClosedWatchServiceException e) {
            log.atDebug().addKeyValue("path", path).log("watch stream ended: client went away");
        }
    }

    CreateWatcherResponse createWatcher(CreateWatcherRequest request, CallContext call) {
        Path path = resolve(request.getPath(), user(call));
        WatchOptions options =
                options(request.getRecursive(), request.getIncludeEntry(), request.getAllowNetworkMounts());
        return run(() -> CreateWatcherResponse.newBuilder()
                .setWatcherId(watchers.create(path, options))
                .build());
    }

    GetWatcherEventsResponse getWatcherEvents(GetWatcherEventsRequest request, CallContext call) {
        return run(() -> {
            GetWatcherEventsResponse.Builder out = GetWatcherEventsResponse.newBuilder();
            for (FsEvent event : watchers.drain(request.getWatcherId())) {
                out.addEvents(EntryProtos.toProto(event));
            }
            return out.build();
        });
    }

    RemoveWatcherResponse removeWatcher(RemoveWatcherRequest request, CallContext call) {
        return run(() -> {
            watchers.remove(request.getWatcherId());
            return RemoveWatcherResponse.getDefaultInstance();
        });
    }

    private static WatchOptions options(boolean recursive, boolean includeEntry, boolean allowNetworkMounts) {
        return new WatchOptions(
                recursive ? WatchOptions.Scope.RECURSIVE : WatchOptions.Scope.CHILDREN,
                includeEntry ? WatchOptions.Detail.WITH_ENTRY : WatchOptions.Detail.NAME_ONLY,
                allowNetworkMounts ? WatchOptions.Mounts.ALLOW_NETWORK : WatchOptions.Mounts.LOCAL_ONLY);
    }

    private UserAccount user(CallContext call) {
        try {
            return accounts.resolve(call.basicAuthUser());
        } catch (UnknownUserException e) {
            throw new RpcException(ConnectCode.UNAUTHENTICATED, e.getMessage());
        }
    }

    private Path resolve(String path, UserAccount user) {
        try {
            return UserPaths.resolve(path, user, session.current().defaultWorkdir());
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidArgument("invalid path: " + e.getMessage());
        }
    }

    static Ownership ownership(UserAccount user) {
        return new Ownership(user.uid(), user.gid());
    }

    private static <T> T run(Operation<T> operation) {
        try {
            return operation.run();
        } catch (FsException e) {
            throw toRpc(e);
        }
    }

    @FunctionalInterface
    private interface Operation<T> {
        T run();
    }

    /** The Connect code for each filesystem failure (E2B's envd codes). */
    static RpcException toRpc(FsException e) {
        ConnectCode code = switch (e.error()) {
            case INVALID_ARGUMENT -> ConnectCode.INVALID_ARGUMENT;
            case NOT_FOUND -> ConnectCode.NOT_FOUND;
            case ALREADY_EXISTS -> ConnectCode.ALREADY_EXISTS;
            case PERMISSION_DENIED -> ConnectCode.PERMISSION_DENIED;
            case FAILED_PRECONDITION -> ConnectCode.FAILED_PRECONDITION;
            case NO_SPACE, RESOURCE_EXHAUSTED -> ConnectCode.RESOURCE_EXHAUSTED;
            case INTERNAL -> ConnectCode.INTERNAL;
        };
        return new RpcException(code, e.getMessage(), e);
    }
}
