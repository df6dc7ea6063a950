package io.agentenv.envd.connect;

import com.google.protobuf.Message;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Connect RPCs envd serves, by procedure name ({@code <package>.<Service>/<Method>}, served at
 * {@code POST /<package>.<Service>/<Method>}). Register everything in the composition root before the server starts:
 * <pre>{@code
 * router.unary("filesystem.Filesystem/Stat", StatRequest.getDefaultInstance(), (request, call) -> ...);
 * router.serverStream("filesystem.Filesystem/WatchDir", WatchDirRequest.getDefaultInstance(), (request, call, out) -> ...);
 * }</pre>
 */
public final class ConnectRouter {
    private final Map<String, Procedure> procedures = new ConcurrentHashMap<>();

    public <Q extends Message, R extends Message> ConnectRouter unary(
            String name, Q requestPrototype, Procedure.UnaryHandler<Q, R> handler) {
        return add(new Procedure.Unary<>(name, requestPrototype, handler));
    }

    public <Q extends Message, R extends Message> ConnectRouter serverStream(
            String name, Q requestPrototype, Procedure.ServerStreamHandler<Q, R> handler) {
        return add(new Procedure.ServerStream<>(name, requestPrototype, handler));
    }

    public <Q extends Message, R extends Message> ConnectRouter clientStream(
            String name, Q requestPrototype, Procedure.ClientStreamHandler<Q, R> handler) {
        return add(new Procedure.ClientStream<>(name, requestPrototype, handler));
    }

    private ConnectRouter add(Procedure procedure) {
        String name = procedure.name();
        int slash = name.indexOf('/');
        if (slash <= 0 || slash != name.lastIndexOf('/') || slash == name.length() - 1 || name.indexOf('.') < 0) {
            throw new IllegalArgumentException("procedure must look like package.Service/Method: " + name);
        }
        if (procedures.putIfAbsent(name, procedure) != null) {
            throw new IllegalStateException("procedure registered twice: " + name);
        }
        return this;
    }

    /** The procedure served at an HTTP path ({@code /process.Process/Start}). */
    public Optional<Procedure> find(String path) {
        if (path == null || path.length() < 2 || path.charAt(0) != '/') {
            return Optional.empty();
        }
        return Optional.ofNullable(procedures.get(path.substring(1)));
    }

    /** True for paths shaped like an RPC, registered or not ({@code /a.B/C}). */
    public static boolean looksLikeRpc(String path) {
        if (path == null || path.length() < 2 || path.charAt(0) != '/') {
            return false;
        }
        String name = path.substring(1);
        int slash = name.indexOf('/');
        return slash > 0
                && slash == name.lastIndexOf('/')
                && name.substring(0, slash).indexOf('.') > 0;
    }
}
