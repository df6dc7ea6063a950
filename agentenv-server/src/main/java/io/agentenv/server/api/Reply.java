package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import java.util.Map;

/** What an endpoint answers; {@link ApiHandler} writes it. */
sealed interface Reply {
    int status();

    /** A JSON body (serialised with the API's mapper) and extra headers. */
    record Json(int status, Object body, Map<String, String> headers) implements Reply {
        public Json {
            requireNonNull(body, "body is null");
            headers = Map.copyOf(headers);
        }

        public Json(int status, Object body) {
            this(status, body, Map.of());
        }
    }

    /** A JSON body that is already serialised (for example stored custom extension params). */
    record RawJson(int status, String body) implements Reply {
        public RawJson {
            requireNonNull(body, "body is null");
        }
    }

    /** A text body, for example Prometheus metrics. */
    record Text(int status, String contentType, String body) implements Reply {
        public Text {
            requireNonNull(contentType, "contentType is null");
            requireNonNull(body, "body is null");
        }
    }

    /**
     * A body written as a stream of {@code length} bytes (a file's content): {@link Body#writeTo} writes it and
     * releases what it holds, also when writing fails.
     */
    record Stream(int status, String contentType, long length, Map<String, String> headers, Body body)
            implements Reply {
        public Stream {
            requireNonNull(contentType, "contentType is null");
            headers = Map.copyOf(headers);
            requireNonNull(body, "body is null");
        }

        /** Writes the body. */
        @FunctionalInterface
        public interface Body {
            void writeTo(java.io.OutputStream out) throws java.io.IOException;
        }
    }

    /** 204 with no body. */
    record NoContent() implements Reply {
        @Override
        public int status() {
            return 204;
        }
    }

    Reply NO_CONTENT = new NoContent();
}
