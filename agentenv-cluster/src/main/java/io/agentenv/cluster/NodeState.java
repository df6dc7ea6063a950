package io.agentenv.cluster;

/** A node's place in the cluster. */
public enum NodeState {
    /** Renewing its lease and taking new sandboxes. */
    ACTIVE,
    /** Renewing its lease, keeping what it runs, taking no new sandboxes; its paused ones resume elsewhere. */
    DRAINING,
    /** Its lease ran out: its running sandboxes were reported lost and its paused ones released to other nodes. */
    DEAD
}
