package io.agentenv.orchestrator;

/** The custom extension's hooks; each is {@code POST {url}/sandbox-hook/<wireName>}. */
public enum Hook {
    START_FRESH("start-fresh"),
    START_RESUME("start-resume"),
    PATCH_PARAMS("patch-params"),
    STOP("stop");

    private final String wireName;

    Hook(String wireName) {
        this.wireName = wireName;
    }

    /** The path segment and the name used in messages, for example {@code start-fresh}. */
    public String wireName() {
        return wireName;
    }
}
