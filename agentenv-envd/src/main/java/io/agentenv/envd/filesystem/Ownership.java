package io.agentenv.envd.filesystem;

/** Numeric owner and group given to files and directories envd creates on a user's behalf. */
public record Ownership(int uid, int gid) {
    public Ownership {
        if (uid < 0 || gid < 0) {
            throw new IllegalArgumentException("uid and gid must be >= 0, got " + uid + ":" + gid);
        }
    }
}
