package io.agentenv.envd.http;

import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;

/**
 * One plain-HTTP route. Runs on a virtual thread and may block; it must write the whole response before returning
 * (see {@link Responses}). Throw {@link HttpException} for a JSON error {@code {"code":<status>,"message":...}}.
 */
@FunctionalInterface
public interface HttpEndpoint {
    void handle(Request request, Response response) throws Exception;
}
