package io.agentenv.orchestrator;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Storage that every node of a cluster reaches, for the artifacts that must outlive the node that made them: paused
 * sandboxes' states and snapshots. With it, another node fetches a paused sandbox's state or a snapshot to restore it
 * (the backend's own files the state was made on, such as a template, must be there too); without it (a lone server)
 * artifacts stay on the local disk only.
 *
 * <p>A key is the artifact's path relative to the artifact root, the same on every node:
 * {@code sandboxes/<sandbox id>/<generation>} or {@code snapshots/<snapshot id>}. A tree is stored whole and read back
 * whole, checked against what was stored. Implementations are thread-safe; the orchestrator never writes one key from
 * two places at once (a paused state is written by the pause that owns the sandbox, a snapshot once when taken).
 */
public interface SharedArtifacts {

    /** Stores the tree {@code dir} (which does not change meanwhile) as {@code key}, replacing what it held. */
    void put(String key, Path dir) throws IOException;

    /**
     * Copies {@code key} to {@code target}, which does not exist: it appears complete or not at all.
     *
     * @throws NoSuchFileException if nothing is stored as {@code key}
     */
    void get(String key, Path target) throws IOException;

    /** Removes {@code key}; nothing stored is not an error. */
    void delete(String key) throws IOException;

    /** Removes every key that starts with {@code prefix} (which ends with {@code '/'}). */
    void deleteAll(String prefix) throws IOException;
}
