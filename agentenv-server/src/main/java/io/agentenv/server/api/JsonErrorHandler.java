package io.agentenv.server.api;

import io.agentenv.api.model.ApiError;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors Jetty produces itself, before our handler runs (malformed requests, ambiguous paths, header limits), get the
 * same JSON envelope instead of Jetty's HTML page. The cause is never sent.
 */
final class JsonErrorHandler extends ErrorHandler {
    private final Json json;

    JsonErrorHandler(Json json) {
        this.json = json;
    }

    @Override
    protected void generateResponse(
            Request request, Response response, int code, String message, Throwable cause, Callback callback) {
        int status = code >= 400 && code <= 599 ? code : 500;
        String text = HttpStatus.getMessage(status);
        byte[] body =
                json.writeBytes(new ApiError(status, text == null ? "error" : text.toLowerCase(java.util.Locale.ROOT)));
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }
}
