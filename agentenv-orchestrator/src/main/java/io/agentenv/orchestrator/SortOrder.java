package io.agentenv.orchestrator;

/** List order by (startedAt, id). E2B's default is DESC (newest first). */
public enum SortOrder {
    ASC,
    DESC
}
