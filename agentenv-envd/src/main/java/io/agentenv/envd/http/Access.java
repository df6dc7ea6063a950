package io.agentenv.envd.http;

/** Who may call an HTTP route. */
public enum Access {
    /** Anyone, always (GET /health). */
    PUBLIC,
    /** Once {@code POST /init} has set an access token, the request must carry it in {@code X-Access-Token}. */
    TOKEN,
    /** The endpoint checks access itself (GET/POST /files accept a valid signature instead of the token). */
    SELF_CHECKED
}
