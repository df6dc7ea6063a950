package io.agentenv.envd.http;

/**
 * One plain-HTTP route. Runs on a virtual thread and may block; it must write the whole response before returning
 * (see {@link Responses}). Throw {@link HttpException} for a JSON error {@code {"code":<status>,"message":...}}.
 */
@FunctionalInterface
public interface HttpEndpoint {
    void handle(EnvdRequest request, EnvdResponse response) throws Exception;
}
